// The Hono app of the sandbox API: cross-cutting behaviour of every route (reference
// sandbox-api.md §1.1): CORS, no-cache headers, HEAD twins answering 200, OPTIONS 204, the
// welcome root, and the one error handler that renders every failure as `{error}`.
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { HttpError, errorMessage } from './errors.js';
import { GATEWAY_TOKEN_HEADER, tokenMatches, UNAUTHORIZED_MESSAGE } from './gateway-token.js';

export const COMMON_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, DELETE, HEAD, OPTIONS',
  // The MCP streamable HTTP headers too, so a browser MCP client may send and read them (issue 14
  // item 7; the gateway answers preflights with the same list, gateway/sandbox-cors.ts).
  'access-control-allow-headers':
    'Content-Type, Authorization, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  'access-control-expose-headers': 'Mcp-Session-Id',
  'cache-control': 'no-cache, no-store, must-revalidate',
  pragma: 'no-cache',
  expires: '0',
  'x-content-type-options': 'nosniff',
};

/** `gatewayToken`: the per-sandbox secret every request must carry (gateway-token.ts); none = open. */
export function createApp(gatewayToken?: string): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    if (!tokenMatches(gatewayToken, c.req.header(GATEWAY_TOKEN_HEADER))) {
      // The engine's readiness probe has no token: it learns only that sandboxd is up.
      if (c.req.method === 'GET' && c.req.path === '/health') return c.json({ status: 'ok' });
      throw new HttpError(401, UNAUTHORIZED_MESSAGE);
    }
    if (c.req.method === 'OPTIONS') return new Response(null, { status: 204, headers: COMMON_HEADERS });
    if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: COMMON_HEADERS });
    await next();
    if (c.res === RESPONSE_ALREADY_SENT) return; // streamed straight to node's response
    for (const [k, v] of Object.entries(COMMON_HEADERS)) c.res.headers.set(k, v);
  });
  app.onError((err, c) => {
    const status = err instanceof HttpError ? err.status : 500;
    const headers = err instanceof HttpError ? err.headers : {};
    return c.json({ error: errorMessage(err) }, status, headers);
  });
  app.notFound((c) => c.json({ error: `route not found: ${c.req.method} ${c.req.path}` }, 404));
  const welcome = (c: { json: (v: unknown) => Response }): Response =>
    c.json({
      message: 'Welcome to the Tarmac sandbox API',
      documentation: 'packages/sandboxd/ARCHITECTURE.md',
      description: 'Filesystem, processes, network, terminal and MCP of this sandbox',
    });
  app.on(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], '/', welcome);
  return app;
}

/**
 * `/filesystem%2Fetc/hosts` (the integration-test spelling, §1.1) has no `/` after the route
 * prefix; insert one so the `{path}` routes match, keeping the `%2F` that marks it absolute.
 */
export function normalizeRequest(req: Request): Request {
  const url = new URL(req.url);
  const m =
    /^\/(filesystem|watch\/filesystem|filesystem-find|filesystem-search|filesystem-content-search)(%2F)/i.exec(
      url.pathname,
    );
  if (!m) return req;
  url.pathname = `/${m[1]}/${url.pathname.slice(m[1]!.length + 1)}`;
  return new Request(url, req);
}
