// The run gateway over real HTTP: a real store with a bootstrapped admin key, the sandbox
// gateway's real proxy, and an HTTP server standing in for a replica (the contract with it is
// plain HTTP on PORT). The controller's view is the test's: records in a map and the real
// ReplicaSets, set as the controller would after a pass. Checks auth (401/404), public, the hold
// (woken by a notice, bounded in number and time, given back by a caller who leaves), the states
// answered at once (disabled, FAILED), the previous revision serving a rollout, header hygiene.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessCache } from '../../framework/access-cache.js';
import { StartWaiters } from '../../framework/held-requests.js';
import { bootstrap } from '../identity/bootstrap.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from '../identity/auth/authenticator.js';
import { JwtService, generateSigningJwk, signingKeyFromJwk } from '../identity/auth/jwt.js';
import { SandboxProxy } from '../sandbox/gateway/proxy.js';
import { AppHosts } from './app-hosts.js';
import { ReplicaSets, type Replica } from './replica-sets.js';
import { RunGateway } from './run-gateway.js';
import type { RunRecord } from './run-ports.js';

const db = testDatabases({})[0]!;

describe('run gateway', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let replicaServer: Server;
  let platform: Server;
  let base = '';
  let ws = '';
  let key = '';
  let replicaPort = 0;
  const seen: Array<{ url: string; headers: Record<string, unknown> }> = [];
  const records = new Map<string, RunRecord>();
  const sets = new ReplicaSets();
  const held = new StartWaiters(2);
  const proxy = new SandboxProxy({ upstreamName: 'replica' });
  const upgraded: Socket[] = [];

  beforeAll(async () => {
    ({ store, dispose } = await db.open());
    const id = await bootstrap(store, { mintKey: true, now: () => new Date() });
    ws = id.workspace;
    key = id.apiKey!;
    replicaServer = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: { ...req.headers } });
      if (req.url === '/slow') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        setTimeout(() => res.end('data: 2\n\n'), 300);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url }));
    });
    replicaServer.on('upgrade', (_req, socket: Socket) => {
      upgraded.push(socket); // never closes its side by itself (afterAll does)
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
      socket.write('hello');
    });
    await new Promise<void>((r) => replicaServer.listen(0, '127.0.0.1', r));
    replicaPort = (replicaServer.address() as AddressInfo).port;
    const jwt = new JwtService(await signingKeyFromJwk(await generateSigningJwk()), 'tarmac');
    const gateway = new RunGateway({
      controller: {
        ready: Promise.resolve(),
        record: (kind, workspace, name) => records.get(`${kind}/${workspace}/${name}`),
        readyReplica: (r, key) => sets.serving(r.id, r.revision, key ? { key, now: Date.now() } : undefined),
        pinSession: (r, key) => sets.pin(r, key, Date.now()),
      },
      access: new AccessCache(
        new BearerAuthenticator(store, jwt),
        new MembershipWorkspaceResolver(store),
        Date.now,
      ),
      forwarder: proxy,
      held,
      holdMs: 1500,
      logger: pino({ level: 'silent' }),
    });
    // Applications by Host, as run-plane.ts mounts them (a fresh map: the table rebuilds each call).
    const apps = new AppHosts(() => new Map(records), 'localhost', ['platform.test']);
    platform = createServer((req: IncomingMessage, res: ServerResponse) => {
      const addr = apps.match(req) ?? gateway.match(req);
      if (addr) void gateway.handle(req, res, addr);
      else res.writeHead(418).end();
    });
    platform.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const addr = apps.match(req) ?? gateway.match(req);
      if (addr) void gateway.upgrade(req, socket, head, addr);
      else socket.destroy();
    });
    await new Promise<void>((r) => platform.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(platform.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const socket of upgraded) socket.destroy();
    proxy.close();
    await new Promise<void>((r) => platform.close(() => r()));
    await new Promise<void>((r) => replicaServer.close(() => r()));
    await dispose();
  });

  beforeEach(() => {
    records.clear();
    for (const r of sets.all()) sets.remove(r);
  });

  function record(name: string, over: Partial<RunRecord> = {}): RunRecord {
    const r: RunRecord = {
      id: `id-${name}`,
      kind: 'agent',
      workspace: ws,
      name,
      status: 'DEPLOYED',
      enabled: true,
      public: false,
      image: 'agents/x:1',
      memoryMB: 256,
      port: 8080,
      hosts: [],
      minScale: 0,
      maxScale: 10,
      revision: 'r1',
      lastMessage: undefined,
      ...over,
    };
    records.set(`agent/${ws}/${name}`, r);
    return r;
  }

  function replicaOf(r: RunRecord): Replica {
    const replica: Replica = {
      engineId: `rp-${r.name}`,
      recordId: r.id,
      kind: r.kind,
      workspace: r.workspace,
      name: r.name,
      revision: r.revision,
      slot: 0,
      attempt: 1,
      ip: '127.0.0.1',
      port: replicaPort,
      phase: 'ready',
      credentialId: `${r.id}.rp0`,
      readyAtMs: 0,
      inflight: 0,
      lastUsedMs: 0,
    };
    sets.set(r.id, r.revision).replicas.push(replica);
    return replica;
  }

  const auth = (k = key) => ({ authorization: `Bearer ${k}` });

  it('forwards to the replica with the path and query; the platform credentials stay behind', async () => {
    replicaOf(record('bot'));
    const res = await fetch(`${base}/${ws}/agents/bot/a/b?c=1`, {
      method: 'POST',
      headers: { ...auth(), 'x-service-thread-id': 't1', 'x-blaxel-authorization': `Bearer ${key}` },
      body: '{"inputs":"x"}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: '/a/b?c=1' });
    const headers = seen.at(-1)!.headers;
    expect(headers['x-service-thread-id']).toBe('t1');
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-blaxel-authorization']).toBeUndefined();
  });

  it('401 without or with a wrong token, 404 for a workspace the key is no member of or a missing agent', async () => {
    replicaOf(record('bot'));
    const none = await fetch(`${base}/${ws}/agents/bot`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await fetch(`${base}/${ws}/agents/bot`, { headers: auth('tk_wrong') })).status).toBe(401);
    // Another workspace's agent of the same name: 404, whether or not it exists there.
    records.set('agent/elsewhere/bot', { ...record('bot'), workspace: 'elsewhere' });
    const other = await fetch(`${base}/elsewhere/agents/bot`, { headers: auth() });
    expect(other.status).toBe(404);
    expect((await fetch(`${base}/${ws}/agents/missing`, { headers: auth() })).status).toBe(404);
  });

  it('applications: served by Host (own host and urls[]), public, their Authorization theirs; unknown 404', async () => {
    const app = { ...record('site'), id: 'id-app-site', kind: 'application' as const, public: true };
    app.hosts = ['shop.example.com'];
    records.delete(`agent/${ws}/site`);
    records.set(`application/${ws}/site`, app);
    replicaOf(app);
    const get = (host: string, path = '/any/path?q=1', headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const port = Number(new URL(base).port);
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            `GET ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n` +
              Object.entries(headers)
                .map(([k, v]) => `${k}: ${v}\r\n`)
                .join('') +
              '\r\n',
          ),
        );
        let raw = '';
        socket.on('data', (c) => (raw += c));
        socket.on('end', () =>
          resolve({ status: Number(raw.split(' ')[1]), body: raw.split('\r\n\r\n')[1] ?? '' }),
        );
        socket.on('error', reject);
      });
    const own = await get(`app-site-${ws}.local.localhost:8080`, '/v0/agents', {
      authorization: 'Basic dTpw',
    });
    expect(own.status).toBe(200);
    expect(own.body).toContain('"url":"/v0/agents"'); // every path is the application's
    expect(seen.at(-1)!.headers.authorization).toBe('Basic dTpw');
    expect((await get('SHOP.example.com.')).status).toBe(200);
    expect(seen.at(-1)!.headers.host).toBe('SHOP.example.com.');
    const unknown = await get(`app-ghost-${ws}.localhost`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain(`application ghost not found in workspace ${ws}`);
    // A host nobody claims, or one the platform owns, is not application traffic at all.
    expect((await get('nobody.example.com', '/x')).status).toBe(418);
    app.hosts = ['platform.test', '10.0.0.5'];
    expect((await get('platform.test', '/x')).status).toBe(418);
    expect((await get('10.0.0.5:8080', '/x')).status).toBe(418); // an IP is the platform's
    const off = await get(`app-site-${ws}.localhost`, '/', {});
    expect(off.status).toBe(200);
    app.enabled = false;
    app.status = 'DEACTIVATED';
    const refused = await get(`app-site-${ws}.localhost`);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('application site is DEACTIVATED (spec.enabled is false)');
  });

  it('public: true needs no token', async () => {
    replicaOf(record('open', { public: true }));
    expect((await fetch(`${base}/${ws}/agents/open`)).status).toBe(200);
  });

  it('holds a request while no replica is ready and forwards it once one is', async () => {
    const r = record('late', { status: 'DEPLOYING' });
    const pending = fetch(`${base}/${ws}/agents/late`, { headers: auth() });
    await new Promise((res) => setTimeout(res, 200));
    expect(held.size).toBe(1);
    replicaOf(r);
    held.notify(ws, 'agent/late');
    expect((await pending).status).toBe(200);
    expect(held.size).toBe(0);
  });

  it('bounds the hold: beyond maxHeld 503 at once, past holdMs 503 with Retry-After', async () => {
    record('slow', { status: 'DEPLOYING' });
    const started = Date.now();
    const a = fetch(`${base}/${ws}/agents/slow`, { headers: auth() });
    const b = fetch(`${base}/${ws}/agents/slow`, { headers: auth() });
    await new Promise((res) => setTimeout(res, 200));
    const c = await fetch(`${base}/${ws}/agents/slow`, { headers: auth() });
    expect(c.status).toBe(503);
    expect((await c.json()) as { error: string }).toEqual({
      error: 'agent slow has no ready replica and 2 requests already wait; retry shortly',
    });
    const [ra, rb] = await Promise.all([a, b]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(ra.status).toBe(503);
    expect(ra.headers.get('retry-after')).toBe('1');
    expect(((await ra.json()) as { error: string }).error).toMatch(
      /no ready replica after 2 s \(status DEPLOYING\)/,
    );
    expect(rb.status).toBe(503);
    expect(held.size).toBe(0);
  });

  it('a caller who leaves gives its place back', async () => {
    record('idle', { status: 'DEPLOYING' });
    const controller = new AbortController();
    const gone = fetch(`${base}/${ws}/agents/idle`, { headers: auth(), signal: controller.signal }).catch(
      () => 0,
    );
    await new Promise((res) => setTimeout(res, 150));
    expect(held.size).toBe(1);
    controller.abort();
    await gone;
    await new Promise((res) => setTimeout(res, 100));
    expect(held.size).toBe(0);
  });

  it('answers at once, naming the state: disabled (no Retry-After), FAILED (with the reason), no image', async () => {
    record('off', { enabled: false, status: 'DEACTIVATED' });
    const off = await fetch(`${base}/${ws}/agents/off`, { headers: auth() });
    expect(off.status).toBe(503);
    expect(off.headers.get('retry-after')).toBeNull();
    expect(await off.json()).toEqual({ error: 'agent off is DEACTIVATED (spec.enabled is false)' });
    record('going', { enabled: false, status: 'DEPLOYED' });
    expect(
      ((await (await fetch(`${base}/${ws}/agents/going`, { headers: auth() })).json()) as { error: string })
        .error,
    ).toBe('agent going is DEACTIVATING (spec.enabled is false)');
    record('bad', { status: 'FAILED', lastMessage: 'Replica exited (code 3); last log lines:\nboom' });
    const bad = await fetch(`${base}/${ws}/agents/bad`, { headers: auth() });
    expect(bad.status).toBe(503);
    expect(((await bad.json()) as { error: string }).error).toBe(
      'agent bad FAILED: Replica exited (code 3); last log lines:\nboom',
    );
    record('bare', { status: 'DEPLOYING', image: undefined });
    const bare = await fetch(`${base}/${ws}/agents/bare`, { headers: auth() });
    expect(((await bare.json()) as { error: string }).error).toMatch(/has no image yet/);
    expect(held.size).toBe(0);
  });

  it('while the new revision has no ready replica the previous one serves; disabled serves none', async () => {
    const r = record('rolling', { status: 'DEPLOYING', revision: 'r2' });
    replicaOf({ ...r, revision: 'r1' }); // only the old revision's replica is ready
    expect((await fetch(`${base}/${ws}/agents/rolling`, { headers: auth() })).status).toBe(200);
    record('rolling', { enabled: false, status: 'DEACTIVATING', revision: 'r3' });
    expect((await fetch(`${base}/${ws}/agents/rolling`, { headers: auth() })).status).toBe(503);
  });

  it('a replica that is gone mid-flight is a 502 naming the replica, not a hang', async () => {
    const r = replicaOf(record('vanished'));
    r.port = 9; // nothing listens there
    const res = await fetch(`${base}/${ws}/agents/vanished`, { headers: auth() });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: string }).error).toMatch(/^replica unreachable: /);
  });

  it('counts a stream and a WebSocket in flight until they end (what a drain waits for)', async () => {
    const r = replicaOf(record('flows'));
    const res = await fetch(`${base}/${ws}/agents/flows/slow`, { headers: auth() });
    expect(r.inflight).toBe(1);
    expect(await res.text()).toBe('data: 1\n\ndata: 2\n\n');
    await new Promise((done) => setTimeout(done, 50));
    expect(r.inflight).toBe(0);
    const client = connect(Number(new URL(base).port), '127.0.0.1');
    client.write(
      `GET /${ws}/agents/flows/socket HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
        'connection: Upgrade\r\nupgrade: websocket\r\n\r\n',
    );
    const got = await new Promise<string>((resolve) => {
      let text = '';
      client.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('hello')) resolve(text);
      });
    });
    expect(got).toMatch(/^HTTP\/1.1 101/);
    expect(r.inflight).toBe(1);
    client.destroy(); // the caller hangs up; the replica never closes its side
    await new Promise((done) => setTimeout(done, 1300));
    expect(r.inflight).toBe(0);
  });

  it('is not run traffic: management and other kinds pass by', async () => {
    expect((await fetch(`${base}/v0/agents/bot`)).status).toBe(418);
    expect((await fetch(`${base}/${ws}/models/bot`)).status).toBe(418);
  });
});
