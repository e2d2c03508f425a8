// The sandbox gateway over real HTTP for in-process tests (planes/sandbox/gateway): a real store
// (SQLite) with a bootstrapped admin key, and an HTTP server standing in for sandboxd — the
// gateway's contract with it is plain HTTP on a port. The stand-in echoes `/echo` bodies, answers
// `{path}` otherwise, echoes WebSocket bytes after the handshake, and records what it saw.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import { pino } from 'pino';
import { bootstrap } from '../planes/identity/bootstrap.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from '../planes/identity/auth/authenticator.js';
import { JwtService, generateSigningJwk, signingKeyFromJwk } from '../planes/identity/auth/jwt.js';
import { LiveSandboxes, type LiveSandbox } from '../planes/sandbox/controllers/live-sandboxes.js';
import { withSandboxGateway } from '../planes/sandbox/gateway/listener.js';
import { SandboxGateway } from '../planes/sandbox/gateway/sandbox-gateway.js';
import { StartWaiters } from '../planes/sandbox/gateway/start-waiters.js';

export interface SandboxGatewayFixture {
  store: Store;
  base: string;
  port: number;
  ws: string;
  key: string;
  accountId: string;
  live: LiveSandboxes;
  /** At most 2 requests wait for starting sandboxes, each at most 1.5 s. */
  starts: StartWaiters;
  /** Names of the entries the gateway touched (resumed). */
  touched: string[];
  /** What the stand-in sandboxd received, in order. */
  seen: { url: string; headers: Record<string, unknown> }[];
  /** A live entry of this workspace whose sandboxd is the stand-in. */
  entry(name: string, state?: LiveSandbox['state']): LiveSandbox;
  auth(): { authorization: string };
  close(): Promise<void>;
}

/** The management app behind the gateway answers `{management: true}` to everything. */
export async function startSandboxGatewayFixture(): Promise<SandboxGatewayFixture> {
  const db = testDatabases({})[0]!; // SQLite: the gateway's store use is two indexed reads
  const { store, dispose } = await db.open();
  const id = await bootstrap(store, { mintKey: true, now: () => new Date() });
  const ws = id.workspace;
  const key = id.apiKey!;
  const live = new LiveSandboxes();
  const starts = new StartWaiters(2);
  const touched: string[] = [];
  const seen: SandboxGatewayFixture['seen'] = [];
  const upstream: Server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: { ...req.headers } });
    if (req.url === '/echo') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      req.pipe(res); // echoes the body as it streams
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-from': 'sandboxd' });
    res.end(JSON.stringify({ path: req.url }));
  });
  upstream.on('upgrade', (req, socket) => {
    seen.push({ url: req.url ?? '', headers: { ...req.headers } });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
    socket.pipe(socket); // raw echo after the handshake
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamPort = (upstream.address() as AddressInfo).port;
  const jwt = new JwtService(await signingKeyFromJwk(await generateSigningJwk()), 'tarmac');
  const gateway = new SandboxGateway({
    live,
    touch: (e: LiveSandbox) => {
      touched.push(e.name);
      e.state = 'RUNNING';
    },
    authenticator: new BearerAuthenticator(store, jwt),
    workspaces: new MembershipWorkspaceResolver(store),
    store,
    logger: pino({ level: 'silent' }),
    sandboxPort: upstreamPort,
    sandboxdToken: (e) => `token-of-${e.id}`,
    starts,
    startWaitMs: 1500,
  });
  const app = new Hono();
  app.all('*', (c) => c.json({ management: true }));
  const platform: ServerType = serve({
    fetch: app.fetch,
    port: 0,
    hostname: '127.0.0.1',
    createServer: withSandboxGateway(() => gateway),
  });
  await new Promise<void>((r) => platform.once('listening', () => r()));
  const port = (platform.address() as AddressInfo).port;
  return {
    store,
    base: `http://127.0.0.1:${port}`,
    port,
    ws,
    key,
    accountId: id.accountId,
    live,
    starts,
    touched,
    seen,
    entry: (name, state = 'RUNNING') => ({
      id: `id-${name}`,
      workspace: ws,
      name,
      engineId: `e-${name}`,
      ip: '127.0.0.1',
      state,
      lastUsedMs: 0,
      bootedMs: 0,
      lastUsedWrittenMs: 0,
      inflight: 0,
      freezing: false,
    }),
    auth: () => ({ authorization: `Bearer ${key}` }),
    async close() {
      await new Promise<void>((r) => platform.close(() => r()));
      await new Promise<void>((r) => upstream.close(() => r()));
      await dispose();
    },
  };
}
