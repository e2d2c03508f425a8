// The sandbox MCP server (reference sandbox-api.md §1.9): the official SDK's McpServer with the
// process, filesystem and search tools, over its web-standard streamable HTTP transport,
// stateless with JSON responses like upstream. Loaded lazily by routes.ts; in the bundle it is a
// separate file (lib/mcp.mjs) so the SDK and classic zod are compiled only when /mcp is used.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { PathContext } from '../fs/paths.js';
import type { ProcessManager } from '../process/manager.js';
import { registerFsTools } from './fs-tools.js';
import { registerProcessTools } from './process-tools.js';
import { registerSearchTools } from './search-tools.js';

export interface McpOptions {
  pm: ProcessManager;
  ctx: PathContext;
  procRoot: string;
  version: string;
  waitCapSec?: number;
}

export function buildMcpServer(o: McpOptions): McpServer {
  const server = new McpServer({ name: 'Sandbox API Server', version: o.version });
  registerProcessTools(server, o.pm, o.ctx, o.procRoot, o.waitCapSec);
  registerFsTools(server, o.ctx);
  registerSearchTools(server, o.ctx);
  return server;
}

/** One stateless exchange: a fresh server and transport per request (the SDK's pattern). */
export async function handleMcp(req: Request, o: McpOptions): Promise<Response> {
  const server = buildMcpServer(o);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req);
  } finally {
    void server.close();
  }
}
