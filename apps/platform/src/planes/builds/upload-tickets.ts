import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { forbidden } from '@tarmac/server-kit';

/**
 * Upload URLs of the code-upload flow (issue 15; reference §1.1 "Code-upload", §3.3 step 5): a
 * short-lived, single-use, signed PUT URL the platform itself serves. The token is
 * `<payload>.<hmac>`, HMAC-SHA256 under a key derived (HKDF) from the platform's secrets key, so
 * nobody without that key can mint one; the payload names the build it feeds and its expiry.
 * Single use: the ids of issued, unused tickets are kept in memory and the first PUT removes its
 * id, so a replay (or any ticket issued before a restart) is a 403.
 */
export interface UploadTarget {
  workspace: string;
  /** The build this upload feeds (builds.service.ts). */
  buildId: string;
}

interface Payload extends UploadTarget {
  id: string;
  exp: number;
}

const MAX_OPEN_TICKETS = 10_000;

export class UploadTickets {
  private readonly key: Buffer;
  private readonly open = new Map<string, number>();

  constructor(
    secretsKey: Uint8Array,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', secretsKey, 'tarmac', 'build upload urls v1', 32));
  }

  issue(target: UploadTarget): { token: string; expiresAt: Date } {
    this.prune();
    const payload: Payload = {
      ...target,
      id: randomBytes(16).toString('hex'),
      exp: this.now() + this.ttlMs,
    };
    this.open.set(payload.id, payload.exp);
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { token: `${body}.${this.sign(body)}`, expiresAt: new Date(payload.exp) };
  }

  /** The ticket's target; 403 for a forged, expired or already used token. Consumes it. */
  consume(token: string): UploadTarget {
    const [body, mac, extra] = token.split('.');
    if (!body || !mac || extra !== undefined || !this.macOk(body, mac)) {
      throw forbidden('upload URL is not valid');
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    if (payload.exp <= this.now()) {
      this.open.delete(payload.id);
      throw forbidden('upload URL has expired; ask for a new one (?upload=true)');
    }
    if (!this.open.delete(payload.id)) throw forbidden('upload URL was already used');
    return { workspace: payload.workspace, buildId: payload.buildId };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }

  private macOk(body: string, mac: string): boolean {
    const want = Buffer.from(this.sign(body));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** Bounds the map: expired tickets go, and past the cap the oldest does. */
  private prune(): void {
    const now = this.now();
    for (const [id, exp] of this.open) if (exp <= now) this.open.delete(id);
    while (this.open.size >= MAX_OPEN_TICKETS) {
      const oldest = this.open.keys().next().value;
      if (oldest === undefined) break;
      this.open.delete(oldest);
    }
  }
}
