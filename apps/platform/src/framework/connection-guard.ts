/**
 * Bounds on the connections a listener holds (issue 19 item 7: 21,000 idle unauthenticated
 * connections used up the process's descriptors, both planes refused everything and the
 * controller's runc lookups failed with EMFILE). Every listener gets
 *  - a total cap and a per-remote-address cap, checked when a connection is accepted: one over
 *    either is closed at once, before any byte is read (it costs one accept and one close);
 *  - for HTTP, a headers timeout (a connection that sends no complete request head in time is
 *    answered 408 and closed, whether it sent nothing or a trickle), a request timeout and a
 *    keep-alive timeout. Upgraded connections (terminal WebSockets) and CONNECT tunnels are
 *    long-lived by design: they stay bounded by the caps.
 * The caps are per listener group (one ConnectionGuard), so the egress proxy, which sandboxes
 * reach, cannot spend the budget of the public listener, and the sum of all groups stays well
 * under the descriptor limit (see `connectionBudget`).
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open connections at once, over every listener of the group. */
  maxConnections: number;
  /** Open connections at once from one remote address. */
  maxPerAddress: number;
}

export interface HttpTimeouts {
  /** Time to receive a complete request head (Node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** Time to receive a complete request, body included (`requestTimeout`; 0 = none). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests (`keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
}

/**
 * Defaults (documented in gateway/CONNECTIONS.md): a slow client has 10 s for its request head;
 * uploads (image import) keep Node's 5 min for a whole request. An idle keep-alive connection is
 * kept 65 s (Node's default is 5 s): a client back after a pause of a few seconds — the SDKs
 * between two tool calls — would otherwise open a new connection, which the first request after
 * the pause paid for (issue 20 item 2); 65 s is also past the 60 s idle timeout of the usual
 * reverse proxies and load balancers in front, so they never reuse a connection the platform has
 * just closed. Idle connections stay counted by the connection caps.
 */
export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
};

/** How often Node sweeps connections for the headers/request timeouts (default would be 30 s). */
export const CONNECTION_CHECK_INTERVAL_MS = 1_000;

export class ConnectionGuard {
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  /** Connections refused since start (for logs and tests). */
  refused = 0;

  constructor(
    readonly limits: ConnectionLimits,
    private readonly onRefuse: (address: string, why: 'total' | 'address') => void = () => undefined,
  ) {}

  /** Counts this server's connections against the group's caps (call before it listens). */
  guard(server: NetServer): void {
    // First listener: a refused socket is destroyed before the HTTP parser or proxy touches it.
    server.prependListener('connection', (socket: Socket) => this.admit(socket));
  }

  /** Applies the HTTP timeouts; the server must be created with `httpServerOptions()`. */
  static applyTimeouts(server: HttpServer, t: HttpTimeouts): void {
    server.headersTimeout = t.headersTimeoutMs;
    server.requestTimeout = t.requestTimeoutMs;
    server.keepAliveTimeout = t.keepAliveTimeoutMs;
  }

  open(): number {
    return this.total;
  }

  private admit(socket: Socket): void {
    const address = normalize(socket.remoteAddress);
    const mine = this.perAddress.get(address) ?? 0;
    const why =
      this.total >= this.limits.maxConnections
        ? 'total'
        : mine >= this.limits.maxPerAddress
          ? 'address'
          : undefined;
    if (why) {
      this.refused++;
      this.onRefuse(address, why);
      socket.destroy();
      return;
    }
    this.total++;
    this.perAddress.set(address, mine + 1);
    socket.once('close', () => {
      this.total--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, left);
    });
  }
}

/** Options for `http.createServer` so the headers timeout is enforced within a second. */
export function httpServerOptions(): { connectionsCheckingInterval: number } {
  return { connectionsCheckingInterval: CONNECTION_CHECK_INTERVAL_MS };
}

/** `::ffff:1.2.3.4` and `1.2.3.4` are one client. */
function normalize(address: string | undefined): string {
  if (!address) return '?';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
