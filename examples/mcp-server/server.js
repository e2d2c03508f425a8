// An MCP server on Tarmac, built from the official TypeScript MCP SDK: McpServer with two tools,
// served over streamable HTTP (StreamableHTTPServerTransport) on the PORT the platform gives
// (README.md of planes/run: the container contract). Deployed as a function, it is reached at
// {run_url}/{workspace}/functions/{name}/mcp. The function's integration connection's secret
// (here API_TOKEN) arrives as an environment variable; the tool proves it has it without
// printing it (a SHA-256 fingerprint), as a real tool would use it to call an API.
import { createHash, randomUUID, webcrypto } from 'node:crypto';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// The SDK calls the global Web Crypto (`crypto.randomUUID()`), global from Node 19 on; tarmac/base
// carries Debian's Node 18, where it is only `node:crypto`'s webcrypto.
globalThis.crypto ??= webcrypto;

/** One McpServer per session, as the SDK's stateful examples do. */
function newServer() {
  const server = new McpServer({ name: 'tarmac-mcp-example', version: '1.0.0' });
  server.registerTool(
    'token_fingerprint',
    {
      description: 'The first 16 hex digits of the SHA-256 of the API_TOKEN the connection gives',
      inputSchema: {},
    },
    async () => {
      const token = process.env.API_TOKEN;
      const text = token
        ? createHash('sha256').update(token).digest('hex').slice(0, 16)
        : 'no API_TOKEN: attach an integration connection with an API_TOKEN secret';
      return { content: [{ type: 'text', text }] };
    },
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

const transports = new Map();

async function readJson(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/mcp') return res.writeHead(404, { 'content-type': 'text/plain' }).end('MCP is at /mcp\n');
    const sessionId = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport && req.method === 'POST' && !sessionId && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    if (!transport) {
      const error = { code: -32000, message: 'No valid session: initialize first' };
      return res
        .writeHead(sessionId ? 404 : 400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error, id: null }));
    }
    await transport.handleRequest(req, res, body);
  } catch (err) {
    console.error('request failed', err);
    if (!res.headersSent) res.writeHead(500).end();
  }
});

const port = Number(process.env.PORT ?? 8080);
httpServer.listen(port, process.env.HOST ?? '0.0.0.0', () => console.log(`MCP server on :${port}/mcp`));
