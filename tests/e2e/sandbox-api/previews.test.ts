// Previews served through the platform's router (spec "Sandbox preview"; ARCHITECTURE.md
// "Addresses"): a public preview serves anyone, a private one only a preview token (header, alias
// header, query parameter); requestHeaders/responseHeaders are applied; delete removes the route
// at once; ttl and expires end it; a custom domain routes by Host. A session (private preview of
// port 443, reference sandbox-api.md "Sessions") is the sandbox API itself, SDK and terminal
// included. Every preview or session request resumes a STANDBY sandbox and marks it used.
import { request } from 'node:http';
import { Sandbox, Tarmac } from '@tarmac/sdk';
import { localhostFetch, nodeWebSocketFactory } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  getSandbox,
  missingCapability,
  startSandboxPlatform,
  waitSandbox,
} from '../sandboxes/support.js';
import { anyFetch, body, call, ownNetwork, openSocket, typeAndRead } from './support.js';

const skip = missingCapability();
const NAME = 'pv-box';
const PORT = 3000;
let p: RunningPlatform | undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tiny app on PORT that answers with the request it saw (path and headers) as JSON. */
const ECHO_APP = `
import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = json.dumps({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("x-app", "echo")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", ${PORT}), H).serve_forever()
`;

interface Echo {
  path: string;
  headers: Record<string, string>;
}

async function createPreview(name: string, spec: Record<string, unknown>): Promise<string> {
  const res = await p!.api(`/v0/sandboxes/${NAME}/previews`, {
    method: 'POST',
    body: JSON.stringify({ metadata: { name }, spec }),
  });
  const view = await body<{ spec: { url: string } }>(res);
  expect(res.status, JSON.stringify(view)).toBe(200);
  return view.spec.url;
}

async function createToken(preview: string, expiresAt: Date): Promise<string> {
  const res = await p!.api(`/v0/sandboxes/${NAME}/previews/${preview}/tokens`, {
    method: 'POST',
    body: JSON.stringify({ spec: { expiresAt: expiresAt.toISOString() } }),
  });
  const t = await body<{ spec: { token: string } }>(res);
  expect(res.status, JSON.stringify(t)).toBe(200);
  return t.spec.token;
}

/** GET with an explicit Host, to 127.0.0.1 (custom domains do not resolve here). */
function getWithHost(host: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const port = Number(new URL(p!.url).port);
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.once('error', reject);
    req.end();
  });
}

async function waitStandby(): Promise<string | undefined> {
  const s = await waitSandbox(p!, NAME, (x) => x.state === 'STANDBY', 'STANDBY', 20_000);
  return s.lastUsedAt;
}

beforeAll(async () => {
  if (skip) return;
  p = await startSandboxPlatform({ env: { TARMAC_STANDBY_AFTER: '2s', ...ownNetwork(2) } });
  await createSandbox(p, NAME);
  const put = await call(p, NAME, 'path', '/filesystem/%2Fopt%2Fecho.py', {
    method: 'PUT',
    body: JSON.stringify({ content: ECHO_APP }),
  });
  expect(put.status).toBe(200);
  const run = await call(p, NAME, 'path', '/process', {
    method: 'POST',
    body: JSON.stringify({
      command: 'python3 /opt/echo.py',
      name: 'echo',
      waitForPorts: [PORT],
      timeout: 30,
    }),
  });
  expect(run.status, await run.clone().text()).toBe(200);
}, 15 * 60_000);
afterAll(() => cleanUp(p, [NAME]), 120_000);

describe.skipIf(skip)(`previews and sessions through the router${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('a public preview serves anyone, with requestHeaders and responseHeaders applied', async () => {
    const url = await createPreview('pub', {
      port: PORT,
      public: true,
      requestHeaders: { 'X-Added': 'to-request' },
      responseHeaders: { 'X-Frame-Options': 'DENY', 'Access-Control-Allow-Origin': '*' },
    });
    expect(url).toMatch(/^http:\/\/[0-9a-f]{16}\.local\.preview\.localhost:\d+$/);
    const res = await anyFetch(`${url}/some/path?q=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-app')).toBe('echo');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const seen = await body<Echo>(res);
    expect(seen.path).toBe('/some/path?q=1');
    expect(seen.headers['x-added']).toBe('to-request');
    // The region label may be left out (reference: `{preview_id}.preview.bl.run`).
    const noRegion = url.replace('.local.preview.', '.preview.');
    expect((await anyFetch(noRegion)).status).toBe(200);
    // An unknown preview id is a 404 {error}.
    const unknown = await anyFetch(url.replace(/\/\/[0-9a-f]{16}/, '//0000000000000000'));
    expect(unknown.status).toBe(404);
    expect(await body(unknown)).toHaveProperty('error');
  });

  it('a private preview: no token 401, wrong 401, expired 401, right token 200 (header, alias, query)', async () => {
    const url = await createPreview('priv', { port: PORT, public: false });
    const none = await anyFetch(`${url}/x`);
    expect(none.status).toBe(401);
    expect((await body<{ error: string }>(none)).error).toMatch(/preview token/i);
    expect((await anyFetch(`${url}/x`, { headers: { 'x-service-preview-token': 'tpv_wrong' } })).status).toBe(
      401,
    );

    const token = await createToken('priv', new Date(Date.now() + 3600_000));
    const ok = await anyFetch(`${url}/x`, { headers: { 'X-Service-Preview-Token': token } });
    expect(ok.status).toBe(200);
    const seen = await body<Echo>(ok);
    expect(seen.headers['x-service-preview-token']).toBeUndefined(); // the token stays at the edge
    expect((await anyFetch(`${url}/x`, { headers: { 'X-Blaxel-Preview-Token': token } })).status).toBe(200);
    for (const q of ['preview_token', 'bl_preview_token']) {
      const viaQuery = await anyFetch(`${url}/x?a=1&${q}=${encodeURIComponent(token)}`);
      expect(viaQuery.status).toBe(200);
      expect((await body<Echo>(viaQuery)).path).toBe('/x?a=1'); // stripped before the app
      // A browser that came with ?preview_token keeps working with the cookie it was given.
      const cookie = viaQuery.headers.get('set-cookie')!.split(';')[0]!;
      expect((await anyFetch(`${url}/y`, { headers: { cookie } })).status).toBe(200);
    }
    expect((await anyFetch(`${url}/x?preview_token=tpv_wrong`)).status).toBe(401);

    const shortLived = await createToken('priv', new Date(Date.now() + 1500));
    expect((await anyFetch(url, { headers: { 'x-service-preview-token': shortLived } })).status).toBe(200);
    await sleep(1700);
    const expired = await anyFetch(url, { headers: { 'x-service-preview-token': shortLived } });
    expect(expired.status).toBe(401);

    // A deleted token stops at once (the token cache follows the ChangeFeed).
    const list = await body<{ metadata: { name: string } }[]>(
      await p!.api(`/v0/sandboxes/${NAME}/previews/priv/tokens`),
    );
    for (const t of list) {
      await p!.api(`/v0/sandboxes/${NAME}/previews/priv/tokens/${t.metadata.name}`, { method: 'DELETE' });
    }
    expect((await anyFetch(url, { headers: { 'x-service-preview-token': token } })).status).toBe(401);
  });

  it('delete removes the route at once; updating public takes effect at once', async () => {
    const url = await createPreview('gone', { port: PORT, public: true });
    expect((await anyFetch(url)).status).toBe(200);
    const put = await p!.api(`/v0/sandboxes/${NAME}/previews/gone`, {
      method: 'PUT',
      body: JSON.stringify({ metadata: { name: 'gone' }, spec: { port: PORT, public: false } }),
    });
    expect(put.status).toBe(200);
    expect((await anyFetch(url)).status).toBe(401);
    const del = await p!.api(`/v0/sandboxes/${NAME}/previews/gone`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect((await anyFetch(url)).status).toBe(404);
  });

  it('ttl and expires end a preview', async () => {
    const ttl = await createPreview('ttl', { port: PORT, public: true, ttl: '2s' });
    const expires = await createPreview('exp', {
      port: PORT,
      public: true,
      expires: new Date(Date.now() + 2000).toISOString(),
    });
    expect((await anyFetch(ttl)).status).toBe(200);
    expect((await anyFetch(expires)).status).toBe(200);
    await sleep(2200);
    const ended = await anyFetch(ttl);
    expect(ended.status).toBe(404);
    expect((await body<{ error: string }>(ended)).error).toMatch(/expired/);
    expect((await anyFetch(expires)).status).toBe(404);
  });

  it('a custom domain preview routes by Host `<prefixUrl>.preview.<customDomain>`', async () => {
    const url = await createPreview('custom', {
      port: PORT,
      public: true,
      customDomain: 'example.com',
      prefixUrl: 'app',
    });
    expect(new URL(url).hostname).toBe('app.preview.example.com');
    const res = await getWithHost('app.preview.example.com', '/hello');
    expect(res.status).toBe(200);
    expect((JSON.parse(res.text) as Echo).path).toBe('/hello');
    expect((await getWithHost('other.preview.example.com', '/')).status).toBe(404);
  });

  it('a preview request resumes a STANDBY sandbox and marks it used', async () => {
    const url = await createPreview('wake', { port: PORT, public: true });
    const before = await waitStandby();
    const res = await anyFetch(url);
    expect(res.status).toBe(200);
    const after = await waitSandbox(
      p!,
      NAME,
      (s) => s.state === 'RUNNING' || s.lastUsedAt !== before,
      'used',
    );
    expect(Date.parse(after.lastUsedAt!)).toBeGreaterThan(Date.parse(before!));
  });

  it('a session (private preview of port 443) is the sandbox API: SDK, terminal; it resumes STANDBY too', async () => {
    const client = new Tarmac({
      apiUrl: p!.url,
      apiKey: p!.credentials.apiKey,
      workspace: p!.credentials.workspace,
      fetch: localhostFetch(),
      webSocket: nodeWebSocketFactory,
    });
    const owner = await Sandbox.get(NAME, client);
    const session = await owner.sessions.create({ expiresAt: new Date(Date.now() + 3600_000) });
    expect(session.url).toMatch(/\.preview\.localhost:\d+$/);

    // Without the token: 401; the platform API key is no substitute on a preview host.
    expect((await anyFetch(`${session.url}/health`)).status).toBe(401);
    const before = await waitStandby();
    const health = await anyFetch(`${session.url}/health`, {
      headers: { 'x-blaxel-preview-token': session.token },
    });
    expect(health.status).toBe(200);
    expect(await body(health)).toMatchObject({ status: 'ok' });
    const used = await getSandbox(p!, NAME);
    expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(before!));

    // The SDK holding only the session (what a browser would get).
    const viaSession = Sandbox.fromSession(session, client);
    const run = await viaSession.process.exec({ command: 'echo session-ok', waitForCompletion: true });
    expect(run.stdout?.trim()).toBe('session-ok');
    await viaSession.fs.write('/tmp/session.txt', 'written via session');
    expect(await viaSession.fs.read('/tmp/session.txt')).toBe('written via session');

    // The terminal WebSocket through the session.
    const ws = await openSocket(`${session.url.replace(/^http/, 'ws')}/terminal/ws`, {
      'x-service-preview-token': session.token,
    });
    try {
      expect(await typeAndRead(ws, 'echo sess-$((20+22))', 'sess-42')).toContain('sess-42');
    } finally {
      ws.close();
    }
    await expect(openSocket(`${session.url.replace(/^http/, 'ws')}/terminal/ws`)).rejects.toThrow(/401/);
    await owner.sessions.delete(session.name);
    expect(
      (await anyFetch(`${session.url}/health`, { headers: { 'x-blaxel-preview-token': session.token } }))
        .status,
    ).toBe(404);
  });
});
