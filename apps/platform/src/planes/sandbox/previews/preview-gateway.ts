/**
 * Serving previews (spec "Sandbox preview"; ARCHITECTURE.md "Addresses": previews at
 * `<preview-id>.<region>.preview.<domain>` or a custom domain): a request to a preview's host is
 * proxied to `spec.port` of its sandbox, after
 *  - the route: the preview exists and has not ended (`ttl` / `expires`), else 404;
 *  - access: `public: true` serves anyone; otherwise a preview token of that preview
 *    (preview-tokens.ts) — none 401, wrong or expired 401;
 *  - resume: like every sandbox request, it marks the sandbox used and thaws it from STANDBY first.
 * `spec.requestHeaders` go on the forwarded request, `spec.responseHeaders` on the answer.
 *
 * A private preview of port 443 is a *session* (reference sandbox-api.md "Sessions"): the sandbox
 * API itself, so it is forwarded to sandboxd (8080) — a browser holding only the preview token can
 * use the whole sandbox API, terminal WebSocket included. Errors are the sandbox plane's `{error}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { released, type LiveSandbox, type LiveSandboxes } from '../controllers/live-sandboxes.js';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import { HOP_BY_HOP_REQUEST, SandboxProxy, type Upstream } from '../gateway/proxy.js';
import type { SandboxGatewayDeps } from '../gateway/sandbox-gateway.js';
import {
  lazyClosedSignal,
  DEFAULT_START_WAIT_MS,
  NotLive,
  untilLive,
  type StartWaiters,
} from '../gateway/start-waiters.js';
import { previewAddress, type PreviewAddress } from './preview-address.js';
import { PreviewRoutes, type PreviewRoute } from './preview-routes.js';
import { PreviewTokenCheck, presentedToken, TOKEN_HEADERS, tokenCookie } from './preview-token-check.js';
import { sandboxApiExposure } from './sandbox-api-exposure.js';
import { SESSION_PORT } from './session-port.js';

export { SESSION_PORT };

export interface PreviewGatewayDeps {
  live: LiveSandboxes;
  /** Thaws a STANDBY sandbox and marks it used (StandbyController.touch). */
  touch: (entry: LiveSandbox) => void;
  store: Pick<Store, 'resources'>;
  changes: ChangeFeed;
  logger: Logger;
  /** Settles once the controllers re-attached to surviving sandboxes. */
  ready?: Promise<void>;
  /** Platform domain of preview hosts (default `localhost`). */
  domain?: string;
  /** sandboxd's port inside the sandbox, where sessions go (8080). */
  sandboxPort?: number;
  /** The token sandboxd expects (../sandbox-credentials.ts): sessions carry it, ports never do. */
  sandboxdToken?: SandboxGatewayDeps['sandboxdToken'];
  /**
   * The sandbox API routes the platform answers itself (SandboxGatewayDeps.intercept, the tunnel
   * routes): a session is the sandbox API, so it gets them too.
   */
  intercept?: SandboxGatewayDeps['intercept'];
  now?: () => number;
  /** Holds requests to a sandbox still starting (../gateway/start-waiters.ts; issue 14 item 1). */
  starts?: StartWaiters;
  /** Longest such a hold (TARMAC_SANDBOX_START_WAIT_SECONDS). */
  startWaitMs?: number;
}

class PreviewError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** No preview claims the host at all (not: it ended, or access was refused). */
    readonly unclaimed = false,
  ) {
    super(message);
  }
}

/** Custom-domain-shaped hosts no preview claims are not preview traffic after all. */
const notOurs = (err: unknown, address: PreviewAddress) =>
  err instanceof PreviewError && err.unclaimed && address.kind === 'custom';

/** The preview token never reaches the sandbox; everything else but hop-by-hop headers does. */
const DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP_REQUEST, ...TOKEN_HEADERS]);

interface Admitted {
  entry: LiveSandbox;
  upstream: Upstream;
  session: boolean;
}

export class PreviewGateway {
  private readonly proxy = new SandboxProxy();
  private readonly routes: PreviewRoutes;
  private readonly tokens: PreviewTokenCheck;
  private readonly domain: string;
  private readonly now: () => number;

  /** The last Host `match` read, and its answer (a function of the Host alone). */
  private lastMatch: { host: string | undefined; address: PreviewAddress | undefined } | undefined;

  constructor(private readonly d: PreviewGatewayDeps) {
    this.domain = d.domain ?? 'localhost';
    this.now = d.now ?? Date.now;
    this.routes = new PreviewRoutes(d.store, d.changes, this.now);
    this.tokens = new PreviewTokenCheck(d.store, d.changes, this.now);
  }

  /**
   * The preview address of the request's Host, or undefined when it is not preview traffic. Asked
   * twice per request (open sessions, then the listener), and clients send the same Host again and
   * again: the last answer is kept by Host.
   */
  match(req: IncomingMessage): PreviewAddress | undefined {
    const host = req.headers.host;
    const last = this.lastMatch;
    if (last && last.host === host) return last.address;
    const address = previewAddress(host, this.domain);
    this.lastMatch = { host, address };
    return address;
  }

  /** Serves the request; `elsewhere` takes it when its custom-looking host is no preview's. */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    address: PreviewAddress,
    elsewhere?: () => void,
  ): Promise<void> {
    let admitted: Admitted;
    try {
      if (await this.sessionPreflight(req, res, address)) return;
      admitted = await this.admit(req, address, lazyClosedSignal(res));
    } catch (err) {
      if (elsewhere && notOurs(err, address)) return elsewhere();
      if (res.destroyed) return; // the caller left while held
      return this.fail(res, err);
    }
    const { entry, upstream, session } = admitted;
    entry.inflight++;
    try {
      if (session && this.d.intercept && (await this.d.intercept(req, res, entry, upstream.path))) return;
      await this.proxy.forward(req, res, upstream);
    } finally {
      released(entry, this.now());
    }
  }

  async upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    address: PreviewAddress,
    elsewhere?: () => void,
  ): Promise<void> {
    let admitted: Admitted;
    try {
      admitted = await this.admit(req, address, lazyClosedSignal(socket));
    } catch (err) {
      if (elsewhere && notOurs(err, address)) return elsewhere();
      if (socket.destroyed) return;
      const status = err instanceof PreviewError ? err.status : 500;
      const body = JSON.stringify({ error: err instanceof Error ? err.message : 'internal error' });
      socket.end(
        `HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const { entry, upstream } = admitted;
    entry.inflight++; // an open WebSocket keeps the sandbox awake
    try {
      await this.proxy.upgrade(req, socket, head, upstream);
    } finally {
      released(entry, this.now());
    }
  }

  /**
   * Whether the request's preview still lets it through: it has not ended and (private) its token
   * still opens it; undefined when no preview claims the host (now). Open preview sessions are
   * re-checked with this and closed when it turns false (issue 19 item 10; open-sessions.ts).
   */
  async stillAdmits(req: IncomingMessage): Promise<boolean | undefined> {
    const address = this.match(req);
    const route = address && (await this.routes.lookup(address));
    if (!route) return undefined;
    if (route.endsAtMs !== undefined && route.endsAtMs <= this.now()) return false;
    if (route.public) return true;
    const { found } = presentedToken(req);
    return found !== undefined && (await this.tokens.opens(route, found.token));
  }

  close(): void {
    this.routes.close();
    this.tokens.close();
    this.proxy.close();
  }

  /**
   * A browser's CORS preflight to a session carries no token (it never carries custom headers),
   * and sandboxd's own answer does not allow the token headers: the edge answers it, so a page
   * holding a session can call the sandbox API with `X-Service-Preview-Token`.
   */
  private async sessionPreflight(
    req: IncomingMessage,
    res: ServerResponse,
    address: PreviewAddress,
  ): Promise<boolean> {
    if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return false;
    const route = await this.routes.lookup(address);
    if (!route || route.port !== SESSION_PORT) return false;
    res
      .writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, PUT, DELETE, HEAD, OPTIONS',
        'access-control-allow-headers': `Content-Type, Authorization, Range, ${TOKEN_HEADERS.join(', ')}`,
        'access-control-max-age': '600',
      })
      .end();
    return true;
  }

  /** Route, access, resume: everything before the first byte goes to the sandbox. */
  private async admit(
    req: IncomingMessage,
    address: PreviewAddress,
    gone: () => AbortSignal,
  ): Promise<Admitted> {
    const route = await this.routes.lookup(address);
    if (!route) throw new PreviewError(404, 'preview not found', true);
    if (route.endsAtMs !== undefined && route.endsAtMs <= this.now()) {
      throw new PreviewError(404, `preview ${route.name} has expired`);
    }
    // Made before issue 19 item 11 refused them at create: a public session, a preview of 8080.
    const exposure = sandboxApiExposure(route.port, route.public, this.d.sandboxPort);
    if (exposure) throw new PreviewError(403, `preview ${route.name} is not served: ${exposure}`);
    const { found, path } = presentedToken(req);
    let setCookie: string | undefined;
    if (!route.public) {
      if (!found) {
        throw new PreviewError(
          401,
          'Missing preview token: send header X-Service-Preview-Token or query parameter preview_token',
        );
      }
      if (!(await this.tokens.opens(route, found.token))) {
        throw new PreviewError(401, 'Invalid or expired preview token');
      }
      if (found.fromQuery) setCookie = tokenCookie(found.token);
    }
    const entry = await this.liveSandbox(route, gone);
    try {
      this.d.touch(entry);
    } catch (err) {
      this.d.logger.warn({ err, sandbox: entry.name }, 'could not resume a sandbox for a preview');
      throw new PreviewError(503, `sandbox ${entry.name} could not be resumed`);
    }
    const responseHeaders = setCookie
      ? { ...route.responseHeaders, 'set-cookie': setCookie }
      : route.responseHeaders;
    const session = route.port === SESSION_PORT;
    return {
      entry,
      session,
      upstream: {
        host: entry.ip,
        port: session ? (this.d.sandboxPort ?? 8080) : route.port,
        // A public preview's query keeps any preview_token the app itself uses.
        path: route.public ? (req.url ?? '/') : path,
        drop: DROP,
        requestHeaders: route.requestHeaders,
        responseHeaders,
        ...(session && this.d.sandboxdToken ? { sandboxdToken: this.d.sandboxdToken(entry) } : {}),
      },
    };
  }

  /** The preview's sandbox once live: a starting one holds the request (issue 14 item 1). */
  private async liveSandbox(route: PreviewRoute, gone: () => AbortSignal): Promise<LiveSandbox> {
    let entry = this.d.live.get(route.workspace, route.sandbox);
    if (!entry && this.d.ready) {
      await this.d.ready.catch(() => undefined);
      entry = this.d.live.get(route.workspace, route.sandbox);
    }
    if (entry) return entry;
    try {
      return await untilLive(
        {
          live: this.d.live,
          store: this.d.store,
          starts: this.d.starts,
          waitMs: this.d.startWaitMs ?? DEFAULT_START_WAIT_MS,
          now: this.now,
        },
        route.workspace,
        route.sandbox,
        gone(),
      );
    } catch (err) {
      if (err instanceof NotLive) {
        throw err.status === 404
          ? new PreviewError(404, 'preview not found')
          : new PreviewError(503, err.message);
      }
      throw err;
    }
  }

  private fail(res: ServerResponse, err: unknown): void {
    const status = err instanceof PreviewError ? err.status : 500;
    if (status === 500) this.d.logger.error({ err }, 'preview gateway error');
    const message = err instanceof PreviewError ? err.message : 'internal error';
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (status === 503) headers['retry-after'] = '1';
    res.writeHead(status, headers).end(JSON.stringify({ error: message }));
  }
}
