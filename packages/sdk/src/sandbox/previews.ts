import { computeRoutes as r } from '@tarmac/contract';
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

  private params(previewName: string) {
    return { sandboxName: this.sandbox, previewName };
  }

  list(): Promise<PreviewResource[]> {
    return this.client.paginate(r.listPreviews, { params: { sandboxName: this.sandbox } }).all();
  }
  get(name: string): Promise<PreviewResource> {
    return this.client.request(r.getPreview, { params: this.params(name) });
  }
  create(options: PreviewCreateOptions): Promise<PreviewResource> {
    const { name, force, expires, ...spec } = options;
    return this.client.request(r.createPreview, {
      params: { sandboxName: this.sandbox },
      query: force ? { force: 'true' } : {},
      body: { metadata: { name }, spec: { ...spec, ...(expires ? { expires: iso(expires) } : {}) } },
    });
  }
  /** Replaces a preview's spec (PUT). */
  update(options: PreviewCreateOptions): Promise<PreviewResource> {
    const { name, force, expires, ...spec } = options;
    return this.client.request(r.updatePreview, {
      params: this.params(name),
      query: force ? { force: 'true' } : {},
      body: { metadata: { name }, spec: { ...spec, ...(expires ? { expires: iso(expires) } : {}) } },
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
    return this.client.request(r.deletePreview, { params: this.params(name) });
  }

  /** Tokens for private previews; `spec.token` is returned only at creation. */
  tokens(preview: string) {
    const params = this.params(preview);
    return {
      create: (expiresAt: Date | string, name?: string): Promise<PreviewTokenResource> =>
        this.client.request(r.createPreviewToken, {
          params,
          body: { ...(name ? { metadata: { name } } : {}), spec: { expiresAt: iso(expiresAt) ?? '' } },
        }),
      list: (): Promise<PreviewTokenResource[]> =>
        this.client.paginate(r.listPreviewTokens, { params }).all(),
      delete: (tokenName: string): Promise<{ message: string }> =>
        this.client.request(r.deletePreviewToken, { params: { ...params, tokenName } }),
    };
  }
}
