// The sandbox gateway over real HTTP (test-support/sandbox-gateway-fixture.ts: a real store and a
// stand-in sandboxd). Checks host- and path-style routing, auth (401/404 without leaking
// existence), resume on use, header hygiene and sandboxd's token, streaming both ways, and
// WebSocket upgrade splicing. Requests to starting sandboxes: sandbox-gateway-start-wait.test.ts.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Store } from '@tarmac/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveSandbox, LiveSandboxes } from '../controllers/live-sandboxes.js';
import {
  startSandboxGatewayFixture,
  type SandboxGatewayFixture,
} from '../../../test-support/sandbox-gateway-fixture.js';

describe('sandbox gateway', () => {
  let f: SandboxGatewayFixture;
  let store: Store;
  let base = '';
  let port = 0;
  let ws = '';
  let key = '';
  let accountId = '';
  let live: LiveSandboxes;
  let touched: string[];
  let seen: SandboxGatewayFixture['seen'];
  const entry = (name: string, state?: LiveSandbox['state']) => f.entry(name, state);
  const auth = () => f.auth();

  beforeAll(async () => {
    f = await startSandboxGatewayFixture();
    ({ store, base, port, ws, key, accountId, live, touched, seen } = f);
    live.add(entry('box-1'));
  });

  afterAll(() => f.close());

  it('answers a browser preflight itself, without credentials, and allows the MCP headers (issue 14 item 7)', async () => {
    const before = seen.length;
    const res = await fetch(`${base}/${ws}/sandboxes/box-1/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,mcp-protocol-version',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    for (const h of [
      'mcp-protocol-version',
      'mcp-session-id',
      'authorization',
      'content-type',
      'last-event-id',
    ]) {
      expect(allowed).toContain(h);
    }
    expect(res.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
    expect(seen.length).toBe(before); // answered at the gateway: no sandbox was reached
    // A plain OPTIONS (no preflight) and a user port's preflight still need credentials.
    expect((await fetch(`${base}/${ws}/sandboxes/box-1/mcp`, { method: 'OPTIONS' })).status).toBe(401);
    const userPort = await fetch(`${base}/${ws}/sandboxes/box-1/port/3000/x`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
    });
    expect(userPort.status).toBe(401);
    expect(userPort.headers.get('access-control-allow-origin')).toBe('*'); // readable by the page
  });

  it('routes path-style requests to sandboxd with the rest of the path and query', async () => {
    const res = await fetch(`${base}/${ws}/sandboxes/box-1/filesystem/tmp?x=1`, { headers: auth() });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-from')).toBe('sandboxd');
    expect(await res.json()).toEqual({ path: '/filesystem/tmp?x=1' });
    expect(touched).toContain('box-1');
    // The caller's platform credentials never reach the sandbox.
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('routes /port/{n}/... to port n inside the sandbox, and refuses a malformed port', async () => {
    const app = createServer((req, res) => res.end(`app:${req.url}`));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const appPort = (app.address() as AddressInfo).port;
    try {
      const res = await fetch(`${base}/${ws}/sandboxes/box-1/port/${appPort}/index.html?a=1`, {
        headers: auth(),
      });
      expect([res.status, await res.text()]).toEqual([200, 'app:/index.html?a=1']);
      const bare = await fetch(`${base}/${ws}/sandboxes/box-1/port/${appPort}`, { headers: auth() });
      expect(await bare.text()).toBe('app:/');
      for (const bad of ['0', '70000', 'abc']) {
        const refused = await fetch(`${base}/${ws}/sandboxes/box-1/port/${bad}/x`, { headers: auth() });
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as { error: string }).error).toMatch(/port/);
      }
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
  });

  it('routes host-style requests (sbx-<name>-<ws>.<region>.<domain>), names with dashes included', async () => {
    // fetch cannot set Host; node's http client can.
    const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/health',
          headers: { ...auth(), host: `sbx-box-1-${ws}.local.localhost:${port}` },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.once('error', reject);
      req.end();
    });
    expect(body.status).toBe(200);
    expect(JSON.parse(body.text)).toEqual({ path: '/health' });
  });

  it('leaves management traffic to the app', async () => {
    expect(await (await fetch(`${base}/v0/sandboxes/box-1`, { headers: auth() })).json()).toEqual({
      management: true,
    });
  });

  it('answers 401 without or with a bad token, and 404 for an unknown sandbox or workspace', async () => {
    const none = await fetch(`${base}/${ws}/sandboxes/box-1/health`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: expect.stringMatching(/bearer/i) });
    expect(
      (await fetch(`${base}/${ws}/sandboxes/box-1/health`, { headers: { authorization: 'Bearer ak_x.y' } }))
        .status,
    ).toBe(401);
    expect((await fetch(`${base}/${ws}/sandboxes/nope/health`, { headers: auth() })).status).toBe(404);
    expect((await fetch(`${base}/other-ws/sandboxes/box-1/health`, { headers: auth() })).status).toBe(404);
  });

  it('resumes a STANDBY sandbox before forwarding', async () => {
    const e = entry('sleepy', 'STANDBY');
    live.add(e);
    const res = await fetch(`${base}/${ws}/sandboxes/sleepy/health`, { headers: auth() });
    expect(res.status).toBe(200);
    expect(e.state).toBe('RUNNING');
    expect(e.inflight).toBe(0);
    expect(e.lastUsedMs).toBeGreaterThan(0);
  });

  it('streams request and response bodies', async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024, 7); // beyond the management body limit
    const res = await fetch(`${base}/${ws}/sandboxes/box-1/echo`, {
      method: 'POST',
      headers: auth(),
      body: payload,
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(payload)).toBe(true);
  });

  it('splices WebSocket upgrades (the terminal) to the sandbox', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET /${ws}/sandboxes/box-1/terminal/ws HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n`,
    );
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toMatch(/^HTTP\/1.1 101/);
    socket.write('ping-123');
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toContain('ping-123');
    expect(live.get(ws, 'box-1')?.inflight).toBe(1); // an open terminal keeps it awake
    socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(live.get(ws, 'box-1')?.inflight).toBe(0);
  });

  /** A GET with a Host header (fetch cannot set Host): status and the token sandboxd received. */
  function viaHost(
    host: string,
    path = '/health',
  ): Promise<{ status: number; text: string; token: unknown }> {
    return new Promise((resolve, reject) => {
      const before = seen.length;
      const req = request(
        { host: '127.0.0.1', port, path, headers: { ...auth(), host: `${host}:${port}` } },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              text,
              token: seen.length > before ? seen.at(-1)?.headers['x-tarmac-sandbox-token'] : undefined,
            }),
          );
        },
      );
      req.once('error', reject);
      req.end();
    });
  }

  it("sends sandboxd its token (issue 19 item 3), replacing a client's, and never to /port/{n}", async () => {
    await fetch(`${base}/${ws}/sandboxes/box-1/health`, {
      headers: { ...auth(), 'x-tarmac-sandbox-token': 'forged' },
    });
    expect(seen.at(-1)?.headers['x-tarmac-sandbox-token']).toBe('token-of-id-box-1');
    const got: Record<string, unknown>[] = [];
    const app = createServer((req, res) => {
      got.push({ ...req.headers });
      res.end('app');
    });
    app.on('upgrade', (req, socket) => {
      got.push({ ...req.headers });
      socket.end('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const appPort = (app.address() as AddressInfo).port;
    try {
      await fetch(`${base}/${ws}/sandboxes/box-1/port/${appPort}/x`, {
        headers: { ...auth(), 'x-tarmac-sandbox-token': 'forged' },
      });
      const socket = connect(port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        `GET /${ws}/sandboxes/box-1/port/${appPort}/ws HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n`,
      );
      await new Promise((r) => setTimeout(r, 200));
      socket.destroy();
      expect(got).toHaveLength(2);
      for (const h of got) expect(h['x-tarmac-sandbox-token']).toBeUndefined();
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
    // The terminal WebSocket to sandboxd carries it.
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET /${ws}/sandboxes/box-1/terminal/ws HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n`,
    );
    await new Promise((r) => setTimeout(r, 200));
    socket.destroy();
    expect(seen.at(-1)?.url).toBe('/terminal/ws');
    expect(seen.at(-1)?.headers['x-tarmac-sandbox-token']).toBe('token-of-id-box-1');
  });

  it('issue 19 item 12: team/x-ai and ai-team/x each reach their own sandbox; an ambiguous plain host is refused', async () => {
    const now = new Date().toISOString();
    const workspace = (name: string) =>
      store.workspaces.create({
        id: `w-${name}`,
        name,
        accountId,
        displayName: null,
        labels: {},
        createdAt: now,
        updatedAt: now,
        createdBy: 't',
        updatedBy: 't',
      });
    for (const name of ['team', 'ai-team', 'c-d', 'd']) await workspace(name);
    const put = (workspace: string, name: string) =>
      live.add({ ...entry(name), id: `${workspace}/${name}`, workspace });
    put('team', 'x-ai');
    put('ai-team', 'x');
    // (The bootstrapped admin sees every workspace of its account.)
    // Each canonical host reaches its own sandbox; the plain host is ai-team/x's canonical one.
    expect(await viaHost('sbx-x-ai-team.local.localhost')).toMatchObject({
      status: 200,
      token: 'token-of-ai-team/x',
    });
    expect(await viaHost('sbx-x--ai-team.local.localhost')).toMatchObject({
      status: 200,
      token: 'token-of-team/x-ai',
    });
    // sbx-a-b-c-d: canonical (b-c-d, a) does not exist; c-d/a-b and d/a-b-c both do and are the
    // caller's: refused, not guessed.
    put('c-d', 'a-b');
    put('d', 'a-b-c');
    const ambiguous = await viaHost('sbx-a-b-c-d.local.localhost');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.token).toBeUndefined();
    expect(JSON.parse(ambiguous.text).error).toMatch(/ambiguous sandbox host.*metadata\.url/);
    expect(await viaHost('sbx-a--b-c-d.local.localhost')).toMatchObject({
      status: 200,
      token: 'token-of-c-d/a-b',
    });
    expect(await viaHost('sbx-a--b--c-d.local.localhost')).toMatchObject({
      status: 200,
      token: 'token-of-d/a-b-c',
    });
  });
});
