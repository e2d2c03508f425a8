import type { SandboxPreviews } from './previews.js';

/** A browser-shareable handle on the sandbox API: a private preview of port 443 plus a token. */
export interface SandboxSession {
  name: string;
  /** Base URL of the sandbox API through the preview. */
  url: string;
  token: string;
  expiresAt: string;
}

/** The sandbox API port as previews see it (reference sandbox-api.md §2.4 Sessions). */
export const SESSION_PORT = 443;
const DAY_MS = 24 * 3600 * 1000;

/** `sandbox.sessions` (reference §2.4 "Sessions"). */
export class SandboxSessions {
  constructor(private readonly previews: SandboxPreviews) {}

  async create(options: { expiresAt?: Date; name?: string } = {}): Promise<SandboxSession> {
    const expiresAt = options.expiresAt ?? new Date(Date.now() + DAY_MS);
    const name = options.name ?? `session-${Date.now()}`;
    const preview = await this.previews.create({
      name,
      port: SESSION_PORT,
      public: false,
      expires: expiresAt,
    });
    const token = await this.previews.tokens(name).create(expiresAt);
    return {
      name,
      url: preview.spec.url ?? '',
      token: token.spec.token ?? '',
      expiresAt: token.spec.expiresAt,
    };
  }

  async list(): Promise<SandboxSession[]> {
    const previews = (await this.previews.list()).filter((p) => p.metadata.name.startsWith('session-'));
    return Promise.all(
      previews.map(async (p) => {
        const [token] = await this.previews.tokens(p.metadata.name).list();
        return {
          name: p.metadata.name,
          url: p.spec.url ?? '',
          token: token?.spec.token ?? '',
          expiresAt: token?.spec.expiresAt ?? p.spec.expires ?? '',
        };
      }),
    );
  }

  async delete(name: string): Promise<void> {
    await this.previews.delete(name);
  }
}
