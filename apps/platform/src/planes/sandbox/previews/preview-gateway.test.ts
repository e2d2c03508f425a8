// The preview gateway over real HTTP at the real listener: a real store (SQLite) holding preview
// and token rows, and an HTTP server standing in for the sandbox (an app port and sandboxd are
// both plain HTTP). Checks routing by Host, public/private access (none, wrong, expired, right
// token in each accepted place), headers both ways, ttl, the session port, touch on every request,
// 503 for a sandbox that is not live, and a WebSocket upgrade through a session.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Store } from '@tarmac/store';
import { newResource, testDatabases } from '@tarmac/store/test-support';
import { Hono } from 'hono';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { LiveSandboxes, type LiveSandbox } from '../controllers/live-sandboxes.js';
import { SANDBOX_KIND } from '../records/sandbox-record.js';
import { PREVIEW_TOKEN_KIND } from './preview-tokens.js';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { withSandboxGateway } from '../gateway/listener.js';
import { StartWaiters } from '../gateway/start-waiters.js';
import { PreviewGateway } from './preview-gateway.js';
import { putPreview, putToken } from './test-support.js';

const db = testDatabases({})[0]!; // SQLite: the gateway reads two indexed tables

describe('preview gateway', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let app: Server;
  let sandboxd: Server;
  let platform: ServerType;
  let port = 0;
  let ws = '';
  const feed = new ChangeFeed();
  const live = new LiveSandboxes();
  const starts = new StartWaiters(10);
  const touched: string[] = [];
  const seen: { url: string; headers: Record<string, unknown> }[] = [];

  const echo = (who: string) => (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ url: req.url ?? '', headers: { ...req.headers } });
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-who': who,
      'x-frame-options': 'SAMEORIGIN',
    });
    res.end(JSON.stringify({ who, url: req.url }));
  };

  async function listen(s: Server): Promise<number> {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  }

  function get(host: string, path = '/', headers: Record<string, string> = {}, method = 'GET') {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path, method, headers: { host, ...headers } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += String(c)));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        );
        req.once('error', reject);
        req.end();
      },
    );
  }

  beforeAll(async () => {
    ({ store, dispose } = await db.open());
    ws = (await bootstrap(store, { mintKey: false, now: () => new Date() })).workspace;
    app = createServer(echo('app'));
    sandboxd = createServer(echo('sandboxd'));
    sandboxd.on('upgrade', (_req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
      socket.pipe(socket);
    });
    const appPort = await listen(app);
    const sandboxdPort = await listen(sandboxd);
    const previews = new PreviewGateway({
      live,
      touch: (e: LiveSandbox) => {
        touched.push(e.name);
        e.state = 'RUNNING';
      },
      store,
      changes: feed,
      logger: pino({ level: 'silent' }),
      sandboxPort: sandboxdPort,
      sandboxdToken: (e) => `token-of-${e.id}`,
      starts,
      startWaitMs: 600,
    });
    const mgmt = new Hono();
    mgmt.all('*', (c) => c.json({ management: true }));
    platform = serve({
      fetch: mgmt.fetch,
      port: 0,
      hostname: '127.0.0.1',
      createServer: withSandboxGateway(
        () => undefined,
        () => [],
        () => previews,
      ),
    });
    await new Promise<void>((r) => platform.once('listening', () => r()));
    port = (platform.address() as AddressInfo).port;
    live.add({
      id: 'id-box',
      workspace: ws,
      name: 'box',
      engineId: 'e-box',
      ip: '127.0.0.1',
      state: 'STANDBY',
      lastUsedMs: 0,
      bootedMs: 0,
      lastUsedWrittenMs: 0,
      inflight: 0,
      freezing: false,
    });
    await putPreview(
      store,
      ws,
      'box',
      'pub',
      {
        port: appPort,
        public: true,
        requestHeaders: { 'X-Injected': 'yes' },
        responseHeaders: { 'X-Frame-Options': 'DENY' },
      },
      'pub0',
    );
    await putPreview(store, ws, 'box', 'priv', { port: appPort, public: false }, 'priv0');
    await putPreview(
      store,
      ws,
      'box',
      'old',
      { port: appPort, public: true, expires: '2020-01-01T00:00:00Z' },
      'old0',
    );
    await putPreview(store, ws, 'box', 'sess', { port: 443, public: false }, 'sess0');
    // Made before issue 19 item 11 (the module refuses them now): a public session, sandboxd's port.
    await putPreview(store, ws, 'box', 'pubsess', { port: 443, public: true }, 'pubsess0');
    await putPreview(store, ws, 'box', 'daemon', { port: sandboxdPort, public: true }, 'daemon0');
    await putPreview(store, ws, 'gone', 'orphan', { port: appPort, public: true }, 'orph0');
    await putToken(store, ws, 'box', 'priv', 'tpv_right', new Date(Date.now() + 3600_000));
    await putToken(store, ws, 'box', 'priv', 'tpv_expired', new Date(Date.now() - 1000));
    await putToken(store, ws, 'box', 'sess', 'tpv_session', new Date(Date.now() + 3600_000));
  });

  afterAll(async () => {
    await new Promise<void>((r) => platform.close(() => r()));
    await new Promise<void>((r) => app.close(() => r()));
    await new Promise<void>((r) => sandboxd.close(() => r()));
    await dispose();
  });

  it('serves a public preview to anyone, resumes the sandbox, applies both header maps', async () => {
    touched.length = 0;
    const res = await get('pub0.local.preview.localhost', '/a/b?c=1', { 'x-service-preview-token': 'tpv_x' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ who: 'app', url: '/a/b?c=1' });
    expect(res.headers['x-frame-options']).toBe('DENY'); // replaced, not doubled
    const sent = seen.at(-1)!.headers;
    expect(sent['x-injected']).toBe('yes');
    expect(sent['x-service-preview-token']).toBeUndefined();
    expect(touched).toEqual(['box']);
  });

  it('a private preview: none 401, wrong 401, expired 401; the right one in a header, alias, query, cookie', async () => {
    const host = 'priv0.local.preview.localhost';
    expect((await get(host)).status).toBe(401);
    expect((await get(host, '/', { 'x-service-preview-token': 'tpv_wrong' })).status).toBe(401);
    expect((await get(host, '/', { 'x-service-preview-token': 'tpv_expired' })).status).toBe(401);
    expect(
      JSON.parse((await get(host, '/', { 'x-service-preview-token': 'tpv_expired' })).body),
    ).toHaveProperty('error');
    expect((await get(host, '/', { 'x-service-preview-token': 'tpv_right' })).status).toBe(200);
    expect((await get(host, '/', { 'x-blaxel-preview-token': 'tpv_right' })).status).toBe(200);
    const q = await get(host, '/p?x=1&bl_preview_token=tpv_right');
    expect(q.status).toBe(200);
    expect(JSON.parse(q.body).url).toBe('/p?x=1');
    expect(String(q.headers['set-cookie'])).toMatch(/^tarmac_preview_token=tpv_right; Path=\/; HttpOnly/);
    expect((await get(host, '/', { cookie: 'a=b; tarmac_preview_token=tpv_right' })).status).toBe(200);
    expect((await get(host, '/?preview_token=tpv_wrong')).status).toBe(401);
  });

  it('a deleted token stops at once once its notice is published', async () => {
    const host = 'priv0.local.preview.localhost';
    const id = await putToken(store, ws, 'box', 'priv', 'tpv_short', new Date(Date.now() + 3600_000));
    expect((await get(host, '/', { 'x-service-preview-token': 'tpv_short' })).status).toBe(200);
    await store.resources.delete(id);
    feed.publish({ workspace: ws, kind: PREVIEW_TOKEN_KIND, name: 'box/priv/x' });
    expect((await get(host, '/', { 'x-service-preview-token': 'tpv_short' })).status).toBe(401);
  });

  it('404 for an unknown or ended preview, 404 when its sandbox is gone, 503 while it is not live', async () => {
    expect((await get('nope.local.preview.localhost')).status).toBe(404);
    const old = await get('old0.preview.localhost');
    expect(old.status).toBe(404);
    expect(JSON.parse(old.body).error).toMatch(/expired/);
    expect((await get('orph0.local.preview.localhost')).status).toBe(404);
    await store.resources.create(
      newResource({ id: 'sbx-stopped', workspace: ws, kind: SANDBOX_KIND, name: 'stopped' }),
    );
    await putPreview(store, ws, 'stopped', 'wait', { port: 1, public: true }, 'wait0');
    feed.publish({ workspace: ws, kind: 'preview', name: 'stopped/wait' });
    // Held (issue 14 item 1), bounded here by 600 ms, then 503 with Retry-After.
    const t0 = Date.now();
    const starting = await get('wait0.local.preview.localhost');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
    expect(starting.status).toBe(503);
    expect(starting.headers['retry-after']).toBe('1');
    expect(JSON.parse(starting.body).error).toBe(
      'sandbox stopped is still starting after 1 s; retry shortly',
    );
    // Gone while held: the notice wakes it, and it is a 404 at once.
    const pending = get('wait0.local.preview.localhost');
    await new Promise((r) => setTimeout(r, 100));
    await store.resources.update('sbx-stopped', {
      status: 'TERMINATED',
      terminatedAt: new Date().toISOString(),
    });
    starts.notify(ws, 'stopped');
    const ended = await pending;
    expect(ended.status).toBe(404);
    expect(Date.now() - t0).toBeLessThan(600 + 550);
  });

  it('other hosts are not previews: the management app answers', async () => {
    expect(JSON.parse((await get(`127.0.0.1:${port}`, '/v0/x')).body)).toEqual({ management: true });
    // A custom-domain-shaped host no preview claims (the platform's own host could look so).
    expect(JSON.parse((await get('api.preview.company.io', '/v0/x')).body)).toEqual({ management: true });
    // A platform-domain preview host is ours either way: 404 {error}, not the app.
    expect(JSON.parse((await get('ffff.local.preview.localhost', '/v0/x')).body)).toHaveProperty('error');
  });

  it('a session (port 443) goes to sandboxd, HTTP and WebSocket, with its token only', async () => {
    const host = 'sess0.local.preview.localhost';
    expect((await get(host, '/health')).status).toBe(401);
    const ok = await get(host, '/health', { 'x-blaxel-preview-token': 'tpv_session' });
    expect(JSON.parse(ok.body)).toEqual({ who: 'sandboxd', url: '/health' });
    expect((await get(host, '/health', { 'x-service-preview-token': 'tpv_right' })).status).toBe(401);

    // A browser's CORS preflight has no token: the edge answers it for sessions, allowing the header.
    const preflight = await get(
      host,
      '/process',
      {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-service-preview-token, content-type',
      },
      'OPTIONS',
    );
    expect(preflight.status).toBe(204);
    expect(String(preflight.headers['access-control-allow-headers'])).toMatch(/x-service-preview-token/i);
    expect(
      (await get('priv0.local.preview.localhost', '/', { 'access-control-request-method': 'GET' }, 'OPTIONS'))
        .status,
    ).toBe(401); // only sessions: a private app's preflight is not let through without a token

    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET /terminal/ws HTTP/1.1\r\nhost: ${host}\r\nx-service-preview-token: tpv_session\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n`,
    );
    let got = '';
    socket.on('data', (c: Buffer) => (got += String(c)));
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toMatch(/^HTTP\/1.1 101/);
    socket.write('ping-through-session');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toContain('ping-through-session');
    socket.destroy();

    const refused = connect(port, '127.0.0.1');
    await new Promise<void>((r) => refused.once('connect', () => r()));
    refused.write(
      `GET /terminal/ws HTTP/1.1\r\nhost: ${host}\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n`,
    );
    let answer = '';
    refused.on('data', (c: Buffer) => (answer += String(c)));
    await new Promise((r) => refused.once('close', r));
    expect(answer).toMatch(/^HTTP\/1.1 401/);
  });

  it('issue 19 item 11: a public preview of the sandbox API (443, or sandboxd port) is not served', async () => {
    const before = seen.length;
    for (const host of ['pubsess0.local.preview.localhost', 'daemon0.local.preview.localhost']) {
      const r = await get(host, '/process');
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error).toMatch(/not served: port \d+ is the sandbox API/);
    }
    expect(seen.length).toBe(before); // nothing reached sandboxd
  });

  it("issue 19 item 3: a session carries sandboxd's token; a preview of a user port never does", async () => {
    await get('sess0.local.preview.localhost', '/health', { 'x-service-preview-token': 'tpv_session' });
    expect(seen.at(-1)?.headers['x-tarmac-sandbox-token']).toBe('token-of-id-box');
    await get('pub0.local.preview.localhost', '/', { 'x-tarmac-sandbox-token': 'forged' });
    expect(seen.at(-1)?.headers['x-who']).toBeUndefined();
    expect(seen.at(-1)?.url).toBe('/');
    expect(seen.at(-1)?.headers['x-tarmac-sandbox-token']).toBeUndefined();
  });
});
