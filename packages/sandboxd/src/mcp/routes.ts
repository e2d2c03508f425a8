// POST /mcp (reference sandbox-api.md §1.9); GET/DELETE/PUT/PATCH /mcp → 405 `{error}` with
// `Allow: POST` (RFC 9110 §15.5.6: a 405 MUST carry Allow; issue 14 item 7). The server itself
// (server.ts) is imported on the first request: the SDK and its schemas would otherwise cost
// every daemon start tens of milliseconds.
import type { Hono } from 'hono';
import { readTextCapped } from '../http/body.js';
import { HttpError } from '../http/errors.js';
import { allowedHostnames, rebindingRefusal } from './host-guard.js';
import type { McpOptions } from './server.js';

export type { McpOptions } from './server.js';

/** The methods /mcp answers (OPTIONS and HEAD are answered for every route by http/app.ts). */
export const MCP_ALLOW = 'POST, OPTIONS';

export function mcpRoutes(
  app: Hono,
  o: McpOptions & { allowedHosts?: readonly string[]; allowed?: ReadonlySet<string> },
): void {
  // `allowed` is live: a warm-pool claim (claim.ts) adds the claimed sandbox's hosts to it.
  const allowed = o.allowed ?? allowedHostnames(o.allowedHosts);
  app.post('/mcp', async (c) => {
    // Before the body is read: a rebinding page gets nothing but the refusal (host-guard.ts).
    // The JSON-RPC error shape is the SDK transport's own for the same refusal.
    const refused = rebindingRefusal(c.req.raw.headers, allowed);
    if (refused) {
      return c.json({ jsonrpc: '2.0', error: { code: -32000, message: refused }, id: null }, 403);
    }
    // Read with the plane's cap first: the SDK's transport would buffer any size.
    const text = await readTextCapped(c.req.raw);
    const { handleMcp } = await import('./server.js');
    return handleMcp(
      new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text }),
      o,
    );
  });
  app.on(['GET', 'DELETE', 'PUT', 'PATCH'], '/mcp', () => {
    throw new HttpError(405, 'method not allowed: the MCP endpoint is stateless, use POST', {
      allow: MCP_ALLOW,
    });
  });
}
