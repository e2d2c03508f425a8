// POST /mcp: the sandbox MCP server over the streamable HTTP transport of the official SDK,
// stateless with JSON responses like upstream (reference sandbox-api.md §1.9). A fresh server and
// transport per request (the SDK's stateless pattern). GET/DELETE /mcp → 405 `{error}`.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Hono } from 'hono';
import type { PathContext } from '../fs/paths.js';
import { HttpError } from '../http/errors.js';
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

/** The SDK is loaded on the first MCP request: its schemas cost ~50 ms at daemon start. */
const sdk = async () => {
  const [{ McpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  return { McpServer, WebStandardStreamableHTTPServerTransport };
};

export async function buildMcpServer(o: McpOptions): Promise<McpServer> {
  const { McpServer } = await sdk();
  const server = new McpServer({ name: 'Sandbox API Server', version: o.version });
  registerProcessTools(server, o.pm, o.ctx, o.procRoot, o.waitCapSec);
  registerFsTools(server, o.ctx);
  registerSearchTools(server, o.ctx);
  return server;
}

export function mcpRoutes(app: Hono, o: McpOptions): void {
  app.post('/mcp', async (c) => {
    const { WebStandardStreamableHTTPServerTransport } = await sdk();
    const server = await buildMcpServer(o);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      void server.close();
    }
  });
  const notAllowed = (): never => {
    throw new HttpError(405, 'method not allowed: the MCP endpoint is stateless, use POST');
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
