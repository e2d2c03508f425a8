/**
 * Preview tokens at the edge (reference sandbox-api.md "Preview sessions"; ARCHITECTURE.md "a
 * preview token for that preview"): where a client may put one, and whether it opens a preview now.
 * Accepted: header `X-Service-Preview-Token` (alias `X-Blaxel-Preview-Token`, what the reference
 * SDK sends), query `?preview_token=` (alias `?bl_preview_token=`), or the cookie this gateway sets
 * after a query-string token so a browser's follow-up requests (scripts, images) need no token.
 * Tokens are stored hashed (modules/previews/preview-tokens.ts); a positive answer is cached until
 * the token expires or any preview token changes (ChangeFeed), so a deleted token stops at once.
 */
import type { IncomingMessage } from 'node:http';
import type { Store } from '@tarmac/store';
import { hashSecret, secretMatches } from '../../../framework/credentials.js';
import { PREVIEW_TOKEN_KIND } from './preview-tokens.js';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import type { PreviewRoute } from './preview-routes.js';

export const TOKEN_HEADERS = ['x-service-preview-token', 'x-blaxel-preview-token'] as const;
export const TOKEN_QUERY = ['preview_token', 'bl_preview_token'] as const;
export const TOKEN_COOKIE = 'tarmac_preview_token';

export interface PresentedToken {
  token: string;
  /** It came in the query string: strip it before forwarding and set the cookie. */
  fromQuery: boolean;
}

/** The preview token of a request, if any, and the path to forward without it. */
export function presentedToken(req: IncomingMessage): { found?: PresentedToken; path: string } {
  const raw = req.url ?? '/';
  const path = raw.startsWith('/') ? raw : `/${raw}`;
  for (const h of TOKEN_HEADERS) {
    const v = req.headers[h];
    const token = Array.isArray(v) ? v[0] : v;
    if (token) return { found: { token: token.trim(), fromQuery: false }, path };
  }
  const q = path.indexOf('?');
  if (q >= 0) {
    const params = new URLSearchParams(path.slice(q + 1));
    for (const name of TOKEN_QUERY) {
      const token = params.get(name);
      if (token) {
        for (const n of TOKEN_QUERY) params.delete(n);
        const rest = params.toString();
        return { found: { token, fromQuery: true }, path: path.slice(0, q) + (rest ? `?${rest}` : '') };
      }
    }
  }
  const cookie = cookieValue(req.headers.cookie, TOKEN_COOKIE);
  return cookie ? { found: { token: cookie, fromQuery: false }, path } : { path };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** `Set-Cookie` for a token that came in the query string, valid on that preview host only. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Lax`;
}

interface TokenSpec {
  expiresAt: string;
}

export class PreviewTokenCheck {
  /** hash(token) + preview → epoch ms the token expires. */
  private readonly valid = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Pick<Store, 'resources'>,
    changes: ChangeFeed,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {
    this.unsubscribe = changes.subscribe(PREVIEW_TOKEN_KIND, () => this.valid.clear());
  }

  /** Whether `token` opens `route` now: it is one of the preview's tokens and not expired. */
  async opens(route: PreviewRoute, token: string): Promise<boolean> {
    const hash = hashSecret(token);
    const key = `${route.workspace}\u0000${route.sandbox}/${route.name}\u0000${hash}`;
    const until = this.valid.get(key);
    if (until !== undefined) {
      if (until > this.now()) return true;
      this.valid.delete(key);
      return false;
    }
    const parent = `${route.sandbox}/${route.name}`;
    let after: { key: string; id: string } | undefined;
    for (;;) {
      const page = await this.store.resources.list<TokenSpec>(
        route.workspace,
        PREVIEW_TOKEN_KIND,
        { sort: 'createdAt:asc', limit: 200, ...(after ? { after } : {}) },
        { parent },
      );
      for (const row of page.items) {
        const stored = row.system.tokenHash;
        const expiresAt = Date.parse(row.spec.expiresAt);
        if (typeof stored === 'string' && expiresAt > this.now() && secretMatches(token, stored)) {
          if (this.valid.size >= this.maxEntries) this.valid.clear();
          this.valid.set(key, expiresAt);
          return true;
        }
      }
      if (!page.hasMore || !page.last) return false;
      after = page.last;
    }
  }

  close(): void {
    this.unsubscribe();
  }
}
