/**
 * The platform's node listener with the sandbox gateway in front: sandbox traffic (host-style or
 * path-style, sandbox-address.ts) goes to the gateway, everything else to the Hono app (management
 * API, OAuth, ops). Dispatch happens before any management middleware runs (ARCHITECTURE.md "One
 * binary": one listener serves all planes). Shaped as `createServer` for @hono/node-server's serve.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  ConnectionGuard,
  DEFAULT_HTTP_TIMEOUTS,
  httpServerOptions,
  type HttpTimeouts,
} from '../../../framework/connection-guard.js';
import type { PreviewGateway } from '../previews/preview-gateway.js';
import type { SandboxGateway } from './sandbox-gateway.js';

/** A raw (non-JSON, unbounded body) management route served beside the app, e.g. image import. */
export interface RawRoute {
  matches(req: IncomingMessage): boolean;
  listener: RequestListener;
  /** Takes a WebSocket (upgrade) request it matches; false leaves it to the next (the run gateway). */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
  /**
   * Matched by Host (an application's own or custom host, planes/run/app-hosts.ts): tried before
   * the sandbox gateway and the app, so a path like `/v0/…` or `/{ws}/sandboxes/…` on that host
   * is the application's.
   */
  byHost?: boolean;
}

/** Connection caps and HTTP timeouts of the listener (issue 19 item 7; connection-guard.ts). */
export interface ListenerBounds {
  guard?: ConnectionGuard;
  timeouts?: HttpTimeouts;
  /** Told of every request and upgrade before it is dispatched (open-sessions.ts). */
  onRequest?: (req: IncomingMessage, res: ServerResponse) => void;
  onUpgrade?: (req: IncomingMessage, socket: Duplex) => void;
}

export function withSandboxGateway(
  gateway: () => SandboxGateway | undefined,
  raw: () => readonly RawRoute[] = () => [],
  previews: () => PreviewGateway | undefined = () => undefined,
  bounds: ListenerBounds = {},
): typeof createServer {
  return ((options: object, app: RequestListener) => {
    const server = createServer(
      { ...options, ...httpServerOptions() },
      (req: IncomingMessage, res: ServerResponse) => {
        bounds.onRequest?.(req, res);
        const rest = () => {
          const claimed = raw().find((r) => r.byHost && r.matches(req));
          if (claimed) return void claimed.listener(req, res);
          const g = gateway();
          const target = g?.match(req);
          if (g && target) return void g.handle(req, res, target);
          const route = raw().find((r) => r.matches(req));
          if (route) return void route.listener(req, res);
          app(req, res);
        };
        // Preview hosts first: they are host-shaped only. A custom-domain-shaped host that no preview
        // claims goes on to the rest (the platform's own host may look like `x.preview.y.z`).
        const pg = previews();
        const preview = pg?.match(req);
        if (pg && preview) return void pg.handle(req, res, preview, rest);
        rest();
      },
    );
    ConnectionGuard.applyTimeouts(server, bounds.timeouts ?? DEFAULT_HTTP_TIMEOUTS);
    bounds.guard?.guard(server);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      bounds.onUpgrade?.(req, socket);
      const rest = () => {
        if (raw().some((r) => r.byHost && r.upgrade?.(req, socket, head))) return;
        const g = gateway();
        const target = g?.match(req);
        if (g && target) return void g.upgrade(req, socket, head, target);
        if (raw().some((r) => r.upgrade?.(req, socket, head))) return;
        socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      };
      const pg = previews();
      const preview = pg?.match(req);
      if (pg && preview) return void pg.upgrade(req, socket, head, preview, rest);
      rest();
    });
    return server;
  }) as typeof createServer;
}
