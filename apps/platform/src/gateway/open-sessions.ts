/**
 * The open requests and upgraded connections that carry a platform credential, so that revoking or
 * expiring it ends them (issue 19 item 10: a terminal WebSocket kept running commands 30 s after
 * its key was revoked). The listener reports every request and upgrade (listener.ts); this keeps
 * the ones with a bearer token until they close, and checks them
 *  - at once when the access cache sees a revocation (an API key deleted, a membership removed...),
 *  - and every `sweepMs` (500 ms), which closes sessions whose credential expired and bounds the
 *    delay for revocations made by another platform process (the cache's 1 s TTL; ChangeFeed
 *    notices are in-process only).
 * Only sessions that were admitted are closed: an HTTP request whose answer started with a status
 * below 400, an upgrade whose credential was valid when it arrived. A request being refused is left
 * to write its own 401. Preview hosts are not tracked (their tokens are preview tokens, and an app
 * behind a public preview may use the Authorization header for itself).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccessCache } from './access-cache.js';

/** Which workspaces a request acts in; undefined: any (check the credential only); null: do not track. */
export type ScopeOf = (req: IncomingMessage) => readonly string[] | undefined | null;

interface Session {
  token: string;
  workspaces: readonly string[] | undefined;
  admitted(): boolean;
  close(): void;
}

export class OpenSessions {
  private readonly sessions = new Set<Session>();
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  private again = false;
  private readonly stopRevocations: () => void;
  /** Sessions closed because their credential stopped being valid (logs and tests). */
  closed = 0;

  constructor(
    private readonly access: Pick<AccessCache, 'allowed' | 'authenticated' | 'onRevoke'>,
    private readonly scopeOf: ScopeOf,
    sweepMs = 500,
  ) {
    this.stopRevocations = access.onRevoke(() => void this.sweep());
    this.timer = setInterval(() => void this.sweep(), sweepMs);
    this.timer.unref();
  }

  request(req: IncomingMessage, res: ServerResponse): void {
    const token = bearer(req);
    const workspaces = token ? this.scopeOf(req) : null;
    if (!token || workspaces === null) return;
    const session: Session = {
      token,
      workspaces,
      admitted: () => res.headersSent && res.statusCode < 400,
      close: () => req.socket.destroy(),
    };
    this.sessions.add(session);
    res.once('close', () => this.sessions.delete(session));
  }

  upgrade(req: IncomingMessage, socket: Duplex): void {
    const token = bearer(req);
    const workspaces = token ? this.scopeOf(req) : null;
    if (!token || workspaces === null) return;
    let admitted = false;
    const session: Session = { token, workspaces, admitted: () => admitted, close: () => socket.destroy() };
    this.sessions.add(session);
    socket.once('close', () => this.sessions.delete(session));
    // The gateway asks the same cache while it admits the upgrade: this is a cache hit.
    void this.valid(session).then((ok) => (admitted = ok));
  }

  size(): number {
    return this.sessions.size;
  }

  /** Checks every admitted session now; one sweep at a time, a request during one runs after it. */
  sweep(): Promise<void> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      do {
        this.again = false;
        await Promise.all(
          [...this.sessions].map(async (s) => {
            if (!s.admitted()) return;
            if (!(await this.valid(s).catch(() => true))) {
              this.closed++;
              this.sessions.delete(s);
              s.close();
            }
          }),
        );
      } while (this.again);
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.timer);
    this.stopRevocations();
  }

  private async valid(s: Session): Promise<boolean> {
    if (!s.workspaces) return (await this.access.authenticated(s.token)) !== undefined;
    for (const w of s.workspaces) if (await this.access.allowed(s.token, w)) return true;
    return false;
  }
}

/** The bearer credential as the planes read it (server-kit bearerToken, sandbox-gateway.ts). */
export function bearer(req: IncomingMessage): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const header =
    req.headers.authorization ??
    first(req.headers['x-service-authorization']) ??
    first(req.headers['x-blaxel-authorization']);
  if (!header) return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}
