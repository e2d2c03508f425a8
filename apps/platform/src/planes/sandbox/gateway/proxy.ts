/**
 * Byte-for-byte forwarding to sandboxd at <ip>:<port>: node streams piped both ways (no body
 * buffering, no re-encoding — fetch would decompress), pooled keep-alive connections, and
 * WebSocket upgrades spliced as raw sockets (the terminal's /terminal/ws).
 */
import {
  Agent,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SANDBOXD_TOKEN_HEADER } from '../sandbox-credentials.js';
import { HOP_BY_HOP, PLATFORM_CREDENTIALS } from '../../../framework/forwarded-headers.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the caller's platform credentials, never forwarded. */
const DROP_REQUEST = new Set<string>([...HOP_BY_HOP, 'authorization', ...PLATFORM_CREDENTIALS]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

export interface Upstream {
  host: string;
  port: number;
  path: string;
  /** Request headers not to forward (default: hop-by-hop plus the platform credentials). */
  drop?: ReadonlySet<string>;
  /** Set on the forwarded request, replacing the client's (a preview's `spec.requestHeaders`). */
  requestHeaders?: Readonly<Record<string, string>>;
  /** Set on the response, replacing the upstream's (a preview's `spec.responseHeaders`). */
  responseHeaders?: Readonly<Record<string, string>>;
  /** Added to the response beside the upstream's own (the run plane's sticky-revision cookie). */
  appendResponseHeaders?: Readonly<Record<string, string>> | undefined;
  /** Told the upstream's response headers first (the run plane remembers an MCP session it made). */
  onResponseHeaders?: ((headers: IncomingHttpHeaders) => void) | undefined;
  /**
   * The sandboxd token (sandbox-credentials.ts), only when `port` is sandboxd's: a user server on
   * another port must never see it. A client's own header of that name is always dropped.
   */
  sandboxdToken?: string;
}

/** Hop-by-hop request headers only: what a preview drops (its app may use Authorization). */
export const HOP_BY_HOP_REQUEST: ReadonlySet<string> = new Set(HOP_BY_HOP);

function forwardHeaders(
  headers: IncomingHttpHeaders,
  drop: ReadonlySet<string>,
  set: Readonly<Record<string, string>> = {},
): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!drop.has(k) && v !== undefined) out[k] = v;
  for (const [k, v] of Object.entries(set)) out[k.toLowerCase()] = v;
  return out;
}

/** `extra` beside what `headers` has: a repeated name becomes a list (Set-Cookie stays one per line). */
function appendHeaders(
  headers: IncomingHttpHeaders,
  extra: Readonly<Record<string, string>> | undefined,
): IncomingHttpHeaders {
  for (const [k, v] of Object.entries(extra ?? {})) {
    const name = k.toLowerCase();
    const had = headers[name];
    headers[name] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
  }
  return headers;
}

/** The request headers for `to`: `forwardHeaders`, then the sandboxd token where it belongs. */
function upstreamHeaders(headers: IncomingHttpHeaders, to: Upstream): IncomingHttpHeaders {
  const out = forwardHeaders(headers, to.drop ?? DROP_REQUEST, to.requestHeaders);
  delete out[SANDBOXD_TOKEN_HEADER];
  if (to.sandboxdToken !== undefined) out[SANDBOXD_TOKEN_HEADER] = to.sandboxdToken;
  return out;
}

/** How long an upgraded connection stays half-closed before both sides are closed. */
const END_GRACE_MS = 1000;

/**
 * The keep-alive connections to sandboxds. Idle sockets close at 60 s, before sandboxd's keep-alive
 * timeout (65 s, packages/sandboxd http/limits.ts): a request after a pause reuses its connection
 * (issue 20 item 2). Shared with the warm pool's claim (pool/warm-pool.ts), so the claimed
 * sandbox's first request finds a connection open (issue 20 item 1). `maxFreeSockets`: idle
 * connections kept per upstream; 4 suits sandboxd, the run plane's replicas take concurrent bursts
 * (a closed idle socket is a new TCP handshake per request).
 */
export function sandboxdAgent(maxFreeSockets = 4): Agent {
  return new Agent({ keepAlive: true, maxFreeSockets, timeout: 60_000 });
}

export class SandboxProxy {
  private readonly agent: Agent;
  /** What a 502 calls the upstream: `sandbox`, or the run plane's `replica`. */
  private readonly upstreamName: string;

  constructor(options: { agent?: Agent; maxFreeSockets?: number; upstreamName?: string } = {}) {
    this.upstreamName = options.upstreamName ?? 'sandbox';
    this.agent = options.agent ?? sandboxdAgent(options.maxFreeSockets);
  }

  /** Pipes the request to the upstream and its response back; resolves when the exchange ends. */
  forward(req: IncomingMessage, res: ServerResponse, to: Upstream): Promise<void> {
    return new Promise((resolve) => {
      const headers = upstreamHeaders(req.headers, to);
      headers['x-forwarded-host'] = req.headers.host;
      const upstream = request(
        { host: to.host, port: to.port, path: to.path, method: req.method, headers, agent: this.agent },
        (up) => {
          to.onResponseHeaders?.(up.headers);
          const out = forwardHeaders(up.headers, DROP_RESPONSE, to.responseHeaders);
          res.writeHead(up.statusCode ?? 502, appendHeaders(out, to.appendResponseHeaders));
          up.pipe(res);
          up.once('error', () => res.destroy());
        },
      );
      upstream.once('error', (err) => {
        if (!res.headersSent) {
          const body = JSON.stringify({ error: `${this.upstreamName} unreachable: ${err.message}` });
          res.writeHead(502, { 'content-type': 'application/json' }).end(body);
        } else res.destroy();
      });
      // The client went away: stop the upstream too (a streaming exec must not linger).
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
        resolve();
      });
      req.pipe(upstream);
    });
  }

  /** Splices an upgrade (WebSocket) request onto a fresh connection to the upstream. */
  upgrade(req: IncomingMessage, client: Duplex, head: Buffer, to: Upstream): Promise<void> {
    return new Promise((resolve) => {
      const server: Socket = connect(to.port, to.host);
      const done = () => {
        client.destroy();
        server.destroy();
        resolve();
      };
      server.once('connect', () => {
        const headers = upstreamHeaders(req.headers, to);
        const lines = [`${req.method ?? 'GET'} ${to.path} HTTP/1.1`];
        for (const [k, v] of Object.entries(headers)) {
          for (const value of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${value}`);
        }
        lines.push('connection: Upgrade', `upgrade: ${req.headers.upgrade ?? 'websocket'}`);
        server.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) server.write(head);
        server.pipe(client);
        client.pipe(server);
      });
      server.once('error', done);
      client.once('error', done);
      server.once('close', done);
      client.once('close', done);
      // HTTP sockets allow half-open connections, so a caller who hangs up (FIN) is only passed on
      // (the pipe ends the other side); an upstream that never closes its side would keep both
      // sockets, and the exchange "in flight", forever. Once either side ended, the other gets
      // END_GRACE_MS to finish, then both close (a WebSocket is not used half-closed).
      let ended = 0;
      const onEnd = () => {
        if (++ended === 2) done();
        else setTimeout(done, END_GRACE_MS).unref();
      };
      server.once('end', onEnd);
      client.once('end', onEnd);
    });
  }

  /** Closes the idle keep-alive connections to one upstream (the run plane, before a freeze). */
  dropIdle(to: { host: string; port: number }): void {
    for (const socket of [...(this.agent.freeSockets[this.agent.getName(to)] ?? [])]) socket.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}
