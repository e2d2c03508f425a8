/**
 * The sandbox gateway (spec "Sandbox API"; ARCHITECTURE.md table, `{sandbox_url}`): requests to a
 * sandbox's URL, host-style or path-style (sandbox-address.ts), are authenticated (a bearer API key
 * or JWT of a principal who can see the workspace), mark the sandbox used, resume it from STANDBY,
 * and are forwarded to sandboxd at <sandbox ip>:8080 — streams both ways, WebSockets included.
 *
 * It sits in front of the management app at the node listener (main.ts), not inside it: sandbox
 * traffic has no management body limit or version header, and the hot path stays a map lookup, a
 * cached access check, a cgroup write when frozen, and a pipe. Errors use the sandbox plane's
 * vocabulary `{error}` (spec "Errors": "Sandbox API errors are `{error: string}`").
 */
import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Authenticator, WorkspaceResolver } from '@tarmac/server-kit';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { released, type LiveSandbox, type LiveSandboxes } from '../controllers/live-sandboxes.js';
import { SANDBOX_KIND } from '../records/sandbox-record.js';
import { AccessCache } from '../../../framework/access-cache.js';
import { SandboxProxy } from './proxy.js';
import {
  DEFAULT_START_WAIT_MS,
  lazyClosedSignal,
  NotLive,
  untilLive,
  type StartWaiters,
} from './start-waiters.js';
import { hostTarget, pathTarget, type SandboxTarget } from './sandbox-address.js';
import { answerPreflight, isPreflight } from './sandbox-cors.js';
import type { SandboxRef } from '../../../framework/sandbox-host-label.js';

export interface SandboxGatewayDeps {
  live: LiveSandboxes;
  /** Thaws a STANDBY sandbox and marks it used (StandbyController.touch). */
  touch: (entry: LiveSandbox) => void;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  store: Pick<Store, 'resources'>;
  logger: Logger;
  /** Settles once the controllers re-attached to surviving sandboxes (first resync after start). */
  ready?: Promise<void>;
  /** Service domain of host-style URLs (default `localhost`). */
  domain?: string;
  /** sandboxd's port inside the sandbox (8080; tests point it elsewhere). */
  sandboxPort?: number;
  /** The token sandboxd of this sandbox expects (sandbox-credentials.ts); sent to sandboxd only. */
  sandboxdToken?: (entry: LiveSandbox) => string;
  /**
   * Routes the platform answers itself after authentication, before proxying to sandboxd (the
   * tunnel routes, tunnel/tunnel-routes.ts). Resolves true when it answered.
   */
  intercept?: (
    req: IncomingMessage,
    res: ServerResponse,
    entry: LiveSandbox,
    path: string,
  ) => Promise<boolean>;
  now?: () => number;
  /** The access cache, shared with open-sessions.ts and fed revocations (issue 19 item 10). */
  access?: AccessCache;
  /**
   * Holds requests to a sandbox that is still starting until it is live (issue 14 item 1;
   * start-waiters.ts). Without it such requests get 503 at once.
   */
  starts?: StartWaiters;
  /** Longest a request is held for a starting sandbox (TARMAC_SANDBOX_START_WAIT_SECONDS). */
  startWaitMs?: number;
  /** Keep-alive connections to sandboxds (proxy.ts sandboxdAgent), shared with the warm pool. */
  agent?: Agent;
}

export { DEFAULT_START_WAIT_MS } from './start-waiters.js';

class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class SandboxGateway {
  private readonly proxy: SandboxProxy;
  private readonly access: AccessCache;
  private readonly domain: string;

  constructor(private readonly d: SandboxGatewayDeps) {
    this.proxy = new SandboxProxy(d.agent ? { agent: d.agent } : {});
    this.domain = d.domain ?? 'localhost';
    this.access = d.access ?? new AccessCache(d.authenticator, d.workspaces, d.now ?? Date.now);
  }

  /** The request's sandbox target, or undefined when it is not sandbox traffic. */
  match(req: IncomingMessage): SandboxTarget | undefined {
    const url = req.url ?? '/';
    return hostTarget(req.headers.host, url, this.domain) ?? pathTarget(url);
  }

  async handle(req: IncomingMessage, res: ServerResponse, target: SandboxTarget): Promise<void> {
    // A browser's preflight has no credentials: answered here, not 401 (sandbox-cors.ts).
    if (isPreflight(req) && this.upstreamOf(target.path)?.port === (this.d.sandboxPort ?? 8080)) {
      return answerPreflight(res);
    }
    let entry: LiveSandbox;
    try {
      entry = await this.admit(req, target, lazyClosedSignal(res));
    } catch (err) {
      if (res.destroyed) return; // the caller left while held
      return this.fail(res, err);
    }
    entry.inflight++;
    try {
      const upstream = this.upstreamOf(target.path);
      if (!upstream) return this.fail(res, new GatewayError(400, 'port must be a number from 1 to 65535'));
      const toDaemon = upstream.port === (this.d.sandboxPort ?? 8080);
      if (toDaemon && this.d.intercept && (await this.d.intercept(req, res, entry, upstream.path))) return;
      await this.proxy.forward(req, res, { host: entry.ip, ...upstream, ...this.tokenFor(entry, toDaemon) });
    } finally {
      released(entry, (this.d.now ?? Date.now)());
    }
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: SandboxTarget): Promise<void> {
    let entry: LiveSandbox;
    try {
      entry = await this.admit(req, target, lazyClosedSignal(socket));
    } catch (err) {
      if (socket.destroyed) return;
      const status = err instanceof GatewayError ? err.status : 500;
      const body = JSON.stringify({ error: err instanceof Error ? err.message : 'internal error' });
      socket.end(
        `HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    entry.inflight++; // an open terminal keeps the sandbox awake, like any request in flight
    try {
      const upstream = this.upstreamOf(target.path);
      if (!upstream) {
        socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      const toDaemon = upstream.port === (this.d.sandboxPort ?? 8080);
      await this.proxy.upgrade(req, socket, head, {
        host: entry.ip,
        ...upstream,
        ...this.tokenFor(entry, toDaemon),
      });
    } finally {
      released(entry, (this.d.now ?? Date.now)());
    }
  }

  close(): void {
    this.proxy.close();
  }

  /** The sandboxd token, for sandboxd's port only: `/port/{n}` of a user server never gets it. */
  private tokenFor(entry: LiveSandbox, toDaemon: boolean): { sandboxdToken?: string } {
    return toDaemon && this.d.sandboxdToken ? { sandboxdToken: this.d.sandboxdToken(entry) } : {};
  }

  /**
   * Where in the sandbox a path goes: `/port/{n}/rest` to port n (reference sandbox-api.md: "any
   * other port is reachable at {sandbox_url}/port/{n}/…"), everything else to sandboxd.
   * Undefined for a malformed port.
   */
  private upstreamOf(path: string): { port: number; path: string } | undefined {
    const m = /^\/port\/([^/?]*)([/?].*)?$/.exec(path);
    if (!m) return { port: this.d.sandboxPort ?? 8080, path };
    const port = Number(m[1]);
    if (!/^\d{1,5}$/.test(m[1] ?? '') || port < 1 || port > 65_535) return undefined;
    const rest = m[2] ?? '/';
    return { port, path: rest.startsWith('?') ? `/${rest}` : rest };
  }

  /** Authenticates, finds the live sandbox, and resumes it: everything before the first byte out. */
  private async admit(
    req: IncomingMessage,
    target: SandboxTarget,
    gone: () => AbortSignal,
  ): Promise<LiveSandbox> {
    const token = bearer(req);
    if (!token)
      throw new GatewayError(401, 'Missing bearer token: send "Authorization: Bearer <API key or JWT>"');
    if (!(await this.access.authenticated(token))) {
      throw new GatewayError(401, 'Invalid, expired or revoked credentials');
    }
    const found = await this.resolve(token, target);
    let entry = this.d.live.get(found.workspace, found.name);
    if (!entry && this.d.ready) {
      // Just restarted: the sandbox may be alive and not re-attached yet. Wait, then look again.
      await this.d.ready.catch(() => undefined);
      entry = this.d.live.get(found.workspace, found.name);
    }
    entry ??= await this.untilLive(found.workspace, found.name, gone());
    try {
      this.d.touch(entry);
    } catch (err) {
      this.d.logger.warn({ err, sandbox: entry.name }, 'could not resume a sandbox');
      throw new GatewayError(503, `sandbox ${entry.name} could not be resumed`);
    }
    return entry;
  }

  /**
   * Which sandbox the address means for this caller (issue 19 item 12, sandbox-host-label.ts):
   * the canonical reading when it exists and the caller may see it; else a plain-form host's
   * legacy readings, but only when exactly one of them exists in a workspace the caller can
   * access — two is refused (400) rather than guessed. A sandbox the caller cannot see gets the
   * same 404 as a missing one (no existence leak).
   */
  private async resolve(token: string, target: SandboxTarget): Promise<SandboxRef> {
    const c = target.canonical;
    // Access first (cached): whether a sandbox exists in a workspace the caller cannot see is not
    // theirs to learn, not even from timing.
    const canonicalAllowed = c !== undefined && (await this.access.allowed(token, c.workspace));
    if (c && canonicalAllowed && (await this.exists(c, true))) return c;
    const mine: SandboxRef[] = [];
    for (const l of target.legacy) {
      if ((await this.access.allowed(token, l.workspace)) && (await this.exists(l, false))) mine.push(l);
    }
    if (mine.length === 1) return mine[0]!;
    if (mine.length > 1) {
      const which = mine.map((m) => `${m.name} in ${m.workspace}`).join(', ');
      throw new GatewayError(
        400,
        `ambiguous sandbox host: it names ${which}; use the sandbox's metadata.url or {run_url}/{workspace}/sandboxes/{name}`,
      );
    }
    if (c && canonicalAllowed) return c; // not there: notLive says 404
    throw new GatewayError(404, `sandbox ${(c ?? target.legacy[0])?.name ?? ''} not found`);
  }

  /** A live sandbox or a record of it (`orEnded`: terminated records count, for their 404). */
  private async exists(ref: SandboxRef, orEnded: boolean): Promise<boolean> {
    if (this.d.live.get(ref.workspace, ref.name)) return true;
    const row = await this.d.store.resources.get(ref.workspace, SANDBOX_KIND, ref.name);
    return row !== undefined && (orEnded || !row.terminatedAt);
  }

  /** The sandbox once it is live; a starting one holds the request (start-waiters.ts). */
  private async untilLive(workspace: string, name: string, gone: AbortSignal): Promise<LiveSandbox> {
    try {
      return await untilLive(
        {
          live: this.d.live,
          store: this.d.store,
          starts: this.d.starts,
          waitMs: this.d.startWaitMs ?? DEFAULT_START_WAIT_MS,
          now: this.d.now ?? Date.now,
        },
        workspace,
        name,
        gone,
      );
    } catch (err) {
      if (err instanceof NotLive) throw new GatewayError(err.status, err.message);
      throw err;
    }
  }

  private fail(res: ServerResponse, err: unknown): void {
    const status = err instanceof GatewayError ? err.status : 500;
    if (status === 500) this.d.logger.error({ err }, 'sandbox gateway error');
    const message = err instanceof GatewayError ? err.message : 'internal error';
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    // A browser client may read why (sandbox-cors.ts); errors carry no credentials or cookies.
    headers['access-control-allow-origin'] = '*';
    if (status === 401) headers['www-authenticate'] = 'Bearer';
    if (status === 503) headers['retry-after'] = '1';
    res.writeHead(status, headers).end(JSON.stringify({ error: message }));
  }
}

function bearer(req: IncomingMessage): string | undefined {
  const header =
    req.headers.authorization ??
    header1(req.headers['x-service-authorization']) ??
    header1(req.headers['x-blaxel-authorization']);
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}

const header1 = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
