/**
 * CORS of sandbox URLs at the gateway (issue 14 item 7). A browser's preflight (OPTIONS with
 * Access-Control-Request-Method) carries no credentials by design (Fetch spec, "CORS-preflight
 * request"), so sending it through authentication answered 401 and no browser MCP client could
 * connect. The gateway answers it itself, before authentication, for sandboxd's routes only: it
 * reveals nothing (the same answer for every sandbox, existing or not) and reaches no sandbox.
 * `/port/{n}/…` preflights go to the user's server, which owns its CORS.
 *
 * Which browser pages may then actually use /mcp is sandboxd's decision (its Host/Origin check,
 * packages/sandboxd mcp/host-guard.ts): a preflight grants nothing without a bearer token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Headers a browser MCP client sends (MCP spec "Streamable HTTP") besides the API's own. */
export const SANDBOX_CORS_ALLOW_HEADERS =
  'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, x-blaxel-authorization';

export const SANDBOX_CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS',
  'access-control-allow-headers': SANDBOX_CORS_ALLOW_HEADERS,
  'access-control-expose-headers': 'mcp-session-id',
  'access-control-max-age': '600',
  vary: 'origin, access-control-request-headers',
};

/** A CORS preflight: OPTIONS naming the method it asks for. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

export function answerPreflight(res: ServerResponse): void {
  res.writeHead(204, SANDBOX_CORS_HEADERS).end();
}
