// The workload the run-plane e2e tests deploy (issue 16): a Node HTTP server built by the builds
// plane from a folder (the base image carries node), behaving by MODE —
//   serve (default): echoes method, path, body, the thread headers and a few env values as JSON;
//     /stream answers SSE (3 events, 300 ms apart); an Mcp-Session-Id is echoed back; a WebSocket
//     upgrade gets one text frame; /exit ends the process (code 7) after answering; /chat keeps a
//     history per X-Service-Thread-Id (and names the process: boot); /slow?ms=N answers {boot}
//     after N ms (the autoscaler's burst); /probe?target=host:port says whether it can connect
//     there; /mcp is a minimal MCP server (streamable HTTP, JSON answers; serverInfo.version
//     names the process);
//   crash: prints a line and exits 3 before listening;
//   silent: prints a line and never listens.
// BOOT is random per process: the same BOOT after a platform restart proves the same process.
import type { Member } from '../../../apps/platform/src/planes/builds/test-archives.js';

const SERVER = `import http from 'node:http';
import net from 'node:net';
import { createHash, randomUUID } from 'node:crypto';
const BOOT = randomUUID();
const mode = process.env.MODE ?? 'serve';
if (mode === 'crash') {
  console.error('boom: MODE=crash exits before listening');
  process.exit(3);
} else if (mode === 'silent') {
  console.log('silent: never listening on purpose');
  setInterval(() => {}, 60_000);
} else {
  // A minimal MCP server over streamable HTTP (JSON answers, no server-initiated stream): enough
  // for the official client's initialize, tools/list and tools/call. The session id is made at
  // initialize; later requests carry it, and whoami reports the one it saw.
  const mcp = (req, res, body) => {
    if (req.method === 'GET') return res.writeHead(405, { allow: 'POST, DELETE' }).end();
    if (req.method === 'DELETE') return res.writeHead(200).end();
    const msg = JSON.parse(body || '{}');
    const session = req.headers['mcp-session-id'] ?? (msg.method === 'initialize' ? randomUUID() : undefined);
    const headers = { 'content-type': 'application/json', ...(session ? { 'mcp-session-id': session } : {}) };
    if (msg.id === undefined) return res.writeHead(202, headers).end();
    const reply = (result) => res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    if (msg.method === 'initialize')
      return reply({
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'run-e2e', version: '1.0.0-' + BOOT },
      });
    if (msg.method === 'tools/list')
      return reply({ tools: [{ name: 'whoami', description: 'what the server sees', inputSchema: { type: 'object' } }] });
    if (msg.method === 'tools/call') {
      const seen = { session: req.headers['mcp-session-id'] ?? null, token: process.env.API_TOKEN ?? null, boot: BOOT };
      return reply({ content: [{ type: 'text', text: JSON.stringify(seen) }] });
    }
    res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'unknown method' } }));
  };
  const threads = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      console.log('request ' + req.method + ' ' + req.url);
      if (req.url === '/mcp') return mcp(req, res, body);
      if (req.url === '/exit') {
        res.end('bye');
        setTimeout(() => {
          console.error('exiting on /exit');
          process.exit(7);
        }, 50);
        return;
      }
      if (req.url === '/chat') {
        // Conversation memory in process, per X-Service-Thread-Id (spec "Inference endpoints").
        const thread = req.headers['x-service-thread-id'];
        if (!thread) return res.end(JSON.stringify({ history: [body], boot: BOOT }));
        const history = threads.get(thread) ?? [];
        history.push(body);
        threads.set(thread, history);
        return res.end(JSON.stringify({ history, boot: BOOT }));
      }
      if (req.url.startsWith('/slow?')) {
        const ms = Number(new URL(req.url, 'http://x').searchParams.get('ms'));
        return setTimeout(() => res.end(JSON.stringify({ boot: BOOT })), Math.min(ms, 120_000));
      }
      if (req.url.startsWith('/probe?')) {
        // Whether this replica can open a TCP connection to ?target=host:port (the attack test).
        const [host, port] = new URL(req.url, 'http://x').searchParams.get('target').split(':');
        const s = net.connect({ host, port: Number(port) });
        const done = (what) => {
          clearTimeout(timer);
          s.destroy();
          if (!res.headersSent) res.end(what);
        };
        const timer = setTimeout(() => done('unreachable'), 2000);
        s.once('connect', () => done('reachable'));
        s.once('error', () => done('unreachable'));
        return;
      }
      if (req.url.startsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        let i = 0;
        const t = setInterval(() => {
          res.write('data: ' + JSON.stringify({ i, at: Date.now() }) + '\\n\\n');
          if (++i === 3) {
            clearInterval(t);
            res.end();
          }
        }, 300);
        return;
      }
      const session = req.headers['mcp-session-id'];
      if (session) res.setHeader('mcp-session-id', session);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        boot: BOOT,
        method: req.method,
        url: req.url,
        body,
        thread: req.headers['x-service-thread-id'] ?? null,
        blaxelThread: req.headers['x-blaxel-thread-id'] ?? null,
        authorization: req.headers.authorization ?? null,
        env: {
          PORT: process.env.PORT,
          HOST: process.env.HOST,
          BL_SERVER_PORT: process.env.BL_SERVER_PORT,
          BL_SERVER_HOST: process.env.BL_SERVER_HOST,
          BL_NAME: process.env.BL_NAME,
          BL_TYPE: process.env.BL_TYPE,
          GREETING: process.env.GREETING ?? null,
          API_TOKEN: process.env.API_TOKEN ?? null,
          REGION_HINT: process.env.REGION_HINT ?? null,
        },
      }));
    });
  });
  // A WebSocket upgrade: the handshake, then one text frame naming the path and thread header.
  server.on('upgrade', (req, socket) => {
    const accept = createHash('sha1')
      .update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
      .digest('base64');
    socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n' +
      'Sec-WebSocket-Accept: ' + accept + '\\r\\n\\r\\n');
    const msg = Buffer.from('ws ' + req.url + ' ' + (req.headers['x-service-thread-id'] ?? '-'));
    socket.write(Buffer.concat([Buffer.from([0x81, msg.length]), msg]));
  });
  server.listen(Number(process.env.PORT), process.env.HOST, () =>
    console.log('listening on ' + process.env.HOST + ':' + process.env.PORT),
  );
}
`;

export const APP_MEMBERS: Member[] = [
  { name: 'server.js', data: SERVER },
  {
    name: 'package.json',
    data: JSON.stringify({ name: 'run-e2e', version: '1.0.0', type: 'module', main: 'server.js' }),
  },
];

export interface Echo {
  boot: string;
  method: string;
  url: string;
  body: string;
  thread: string | null;
  blaxelThread: string | null;
  authorization: string | null;
  env: Record<string, string | null>;
}
