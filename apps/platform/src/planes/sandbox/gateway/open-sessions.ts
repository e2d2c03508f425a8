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
 * to write its own 401. Preview hosts are checked by the preview gateway instead (`checkOf`): a
 * preview session ends when its preview token is deleted or expires, or the preview ends — an app
 * behind a public preview may use the Authorization header for itself, which is none of ours.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccessCache } from '../../../framework/access-cache.js';

/** Which workspaces a request acts in; undefined: any (check the credential only); null: do not track. */
export type ScopeOf = (req: IncomingMessage) => readonly string[] | undefined | null;

/** Whether a session may go on; asked at every sweep. */
export type SessionCheck = () => Promise<boolean>;

/**
 * The check of a request that the bearer rule does not cover (preview hosts), undefined for the
 * bearer rule, null to leave the request untracked.
 */
export type CheckOf = (req: IncomingMessage) => SessionCheck | undefined | null;

interface Session {
  valid: SessionCheck;
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
    private readonly checkOf: CheckOf = () => undefined,
  ) {
    this.stopRevocations = access.onRevoke(() => void this.sweep());
    this.timer = setInterval(() => void this.sweep(), sweepMs);
    this.timer.unref();
  }

  request(req: IncomingMessage, res: ServerResponse): void {
    const valid = this.checkFor(req);
    if (!valid) return;
    const session: Session = {
      valid,
      admitted: () => res.headersSent && res.statusCode < 400,
      close: () => req.socket.destroy(),
    };
    this.sessions.add(session);
    res.on('close', () => this.sessions.delete(session)); // closes once: no `once` wrapper per request
  }

  upgrade(req: IncomingMessage, socket: Duplex): void {
    const valid = this.checkFor(req);
    if (!valid) return;
    let admitted = false;
    const session: Session = { valid, admitted: () => admitted, close: () => socket.destroy() };
    this.sessions.add(session);
    socket.once('close', () => this.sessions.delete(session));
    // The gateways ask the same caches while they admit the upgrade: these are cache hits.
    void valid().then(
      (ok) => (admitted = ok),
      () => undefined,
    );
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
            if (!(await s.valid().catch(() => true))) {
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

  /** The session's check, or undefined when the request is not tracked. */
  private checkFor(req: IncomingMessage): SessionCheck | undefined {
    const own = this.checkOf(req);
    if (own !== undefined) return own ?? undefined;
    return this.bearerCheck(req);
  }

  /**
   * The bearer rule: the request's platform credential may still act in its workspace(s). Which
   * workspaces is read at the first check, not per request (the listener reports every request; a
   * sweep checks only the ones still open): a request not to be tracked (`null`) then passes.
   */
  bearerCheck(req: IncomingMessage): SessionCheck | undefined {
    const token = bearer(req);
    if (!token) return undefined;
    let read = false;
    let workspaces: readonly string[] | undefined | null;
    return async () => {
      if (!read) {
        workspaces = this.scopeOf(req);
        read = true;
      }
      if (workspaces === null) return true;
      if (!workspaces) return (await this.access.authenticated(token)) !== undefined;
      for (const w of workspaces) if (await this.access.allowed(token, w)) return true;
      return false;
    };
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
