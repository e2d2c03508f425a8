// POST /mcp (reference sandbox-api.md §1.9); GET/DELETE /mcp → 405 `{error}`. The server itself
// (server.ts) is imported on the first request: the SDK and its schemas would otherwise cost
// every daemon start tens of milliseconds.
import type { Hono } from 'hono';
import { readTextCapped } from '../http/body.js';
import { HttpError } from '../http/errors.js';
import type { McpOptions } from './server.js';

export type { McpOptions } from './server.js';

export function mcpRoutes(app: Hono, o: McpOptions): void {
  app.post('/mcp', async (c) => {
    // Read with the plane's cap first: the SDK's transport would buffer any size.
    const text = await readTextCapped(c.req.raw);
    const { handleMcp } = await import('./server.js');
    return handleMcp(
      new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text }),
      o,
    );
  });
  const notAllowed = (): never => {
    throw new HttpError(405, 'method not allowed: the MCP endpoint is stateless, use POST');
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
