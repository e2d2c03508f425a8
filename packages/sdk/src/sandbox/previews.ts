import type { TarmacClient } from '../client.js';
import { NotFoundError } from '../http/errors.js';
import type { PreviewResource, PreviewTokenResource } from './types.js';

export interface PreviewCreateOptions {
  name: string;
  port: number;
  public?: boolean;
  prefixUrl?: string;
  customDomain?: string;
  ttl?: string;
  expires?: Date | string;
  requestHeaders?: Record<string, string>;
  responseHeaders?: Record<string, string>;
  /** Replace previews that conflict on the custom-domain prefix. */
  force?: boolean;
}

const iso = (value: Date | string | undefined) => (value instanceof Date ? value.toISOString() : value);

/** `sandbox.previews`: public or token-protected URLs onto a sandbox port (reference §2.4 Previews). */
export class SandboxPreviews {
  constructor(
    private readonly client: TarmacClient,
    private readonly sandbox: string,
  ) {}

  private path(preview?: string, rest = '') {
    const base = `/v0/sandboxes/${encodeURIComponent(this.sandbox)}/previews`;
    return preview ? `${base}/${encodeURIComponent(preview)}${rest}` : base;
  }

  async list(): Promise<PreviewResource[]> {
    return this.client.paginatePath<PreviewResource>(this.path()).all();
  }
  get(name: string): Promise<PreviewResource> {
    return this.client.call('GET', this.path(name));
  }
  create(options: PreviewCreateOptions): Promise<PreviewResource> {
    const { name, force, expires, ...spec } = options;
    return this.client.call('POST', this.path(), {
      query: force ? { force: true } : {},
      json: { metadata: { name }, spec: { ...spec, ...(expires ? { expires: iso(expires) } : {}) } },
    });
  }
  async createIfNotExists(options: PreviewCreateOptions): Promise<PreviewResource> {
    try {
      return await this.get(options.name);
    } catch (error) {
      if (error instanceof NotFoundError) return this.create(options);
      throw error;
    }
  }
  delete(name: string): Promise<PreviewResource> {
    return this.client.call('DELETE', this.path(name));
  }

  /** Tokens for private previews; `spec.token` is returned at creation. */
  tokens(preview: string) {
    const path = (token?: string) =>
      this.path(preview, `/tokens${token ? `/${encodeURIComponent(token)}` : ''}`);
    return {
      create: (expiresAt: Date | string, name = `token-${Date.now()}`): Promise<PreviewTokenResource> =>
        this.client.call('POST', path(), {
          json: { metadata: { name }, spec: { expiresAt: iso(expiresAt) } },
        }),
      list: (): Promise<PreviewTokenResource[]> =>
        this.client.paginatePath<PreviewTokenResource>(path()).all(),
      delete: (name: string): Promise<unknown> => this.client.call('DELETE', path(name)),
    };
  }
}
