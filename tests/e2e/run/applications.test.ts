// Issue 16 "Applications", end to end on the real platform, real buildah and real runc: a Node server
// built from a folder (`?upload=true`, the way `tarmac deploy --type application` sends it) runs as
// an application replica listening on its `spec.port` (PORT set to it) and is served on its own
// host `app-<name>-<ws>.<region>.<domain>` without a token (applications are public), every path
// its own, SSE and WebSocket through; a second application made from the spec's body shape (the
// image in `revisions[]`) is served on a custom domain by Host; another workspace cannot claim that
// domain (409 naming the field); a Host naming an unknown application is 404; `enabled: false` →
// DEACTIVATING → DEACTIVATED and 503; delete removes the replica; a platform restart re-attaches the
// replica on its non-default port (same process).
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import type { RunningPlatform } from '../support/platform.js';
import { closeRunPlatform } from '../support/run-workloads.js';
import {
  engineIds,
  json,
  missingBuildCapability,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import { APP_MEMBERS, type Echo } from './app-image.js';

const skip = missingBuildCapability();
const OTHER = 'ap-other';
const DOMAIN = 'shop.example.test';

interface App {
  status: string;
  metadata: { url: string };
  spec: { image?: string; port: number; revisions: Array<{ id: string; image: string; port: number }> };
  events: Array<{ status: string; message: string }>;
}

describe.skipIf(skip !== null)(`run plane: applications${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let home = '';
  let ws = '';
  let workspaceId = '';
  let image = '';
  const ids = new Set<string>();
  const api = (path: string, init: RequestInit = {}, workspace = ws) =>
    p.api(path, {
      ...init,
      headers: { 'x-service-workspace': workspace, ...(init.headers as Record<string, string>) },
    });
  const app = async (name: string) => json<App>(await api(`/v0/applications/${name}`));
  const until = (name: string, statuses: string[], ms = 120_000) =>
    waitFor(
      `application ${name} in ${statuses.join('|')}`,
      async () => {
        const r = await app(name);
        return statuses.includes(r.status) ? r : undefined;
      },
      ms,
    );
  /** A request to the platform's listener with an explicit Host (no DNS for these names here). */
  const byHost = (host: string, path = '/', headers: Record<string, string> = {}) =>
    new Promise<{ status: number; text: string; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: p.port, path, method: 'POST', headers: { ...headers, host } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += String(c)));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        },
      );
      req.once('error', reject);
      req.end('{"inputs":"hi"}');
    });
  const ownHost = (name: string) => `app-${name}-${ws}.local.localhost:${p.port}`;

  const start = (h?: string) =>
    startSandboxPlatform({
      ...(h ? { home: h } : {}),
      env: {
        TARMAC_BRIDGE: 'tarmacap0',
        TARMAC_SUBNET: '10.120.0.0/16',
        TARMAC_RUN_READY_TIMEOUT_SECONDS: '20',
      },
    });

  beforeAll(async () => {
    p = await start();
    home = p.home;
    ws = p.credentials.workspace;
    workspaceId = (await json<{ id?: string }>(await api(`/v0/workspaces/${ws}`))).id ?? '';
    // Built by the builds plane, as `tarmac deploy --type application` does: flat fields + upload.
    const open = await api('/v0/applications?upload=true', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'web' },
        spec: { port: 3000, memory: 256, envs: [{ name: 'GREETING', value: 'hello app', secret: true }] },
      }),
    });
    expect(open.status, await open.clone().text()).toBe(200);
    const put = await fetch(open.headers.get('x-blaxel-upload-url')!, {
      method: 'PUT',
      body: zipOf(APP_MEMBERS),
      headers: { 'content-type': 'application/zip' },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const built = await until('web', ['DEPLOYED', 'FAILED'], 6 * 60_000);
    expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
    image = built.spec.image ?? '';
    expect(image).toMatch(/^applications\/web:/);
    const made = await p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: OTHER }) });
    expect(made.status, await made.clone().text()).toBe(200);
  }, 10 * 60_000);

  afterAll(async () => {
    if (!p) return;
    for (const w of [ws, OTHER]) {
      const list = await json<Array<{ metadata: { name: string } }>>(
        await api('/v0/applications', {}, w),
      ).catch(() => []);
      for (const r of list) await api(`/v0/applications/${r.metadata.name}`, { method: 'DELETE' }, w);
    }
    await closeRunPlatform(p, ids, workspaceId);
  }, 180_000);

  it('serves on its own host, public, listening on spec.port; every path, SSE and WebSocket are its own', async () => {
    const web = await app('web');
    expect(web.metadata.url).toBe(`http://${ownHost('web')}`);
    expect(web.events.at(-1)?.message).toMatch(/answers on port 3000/);
    // No token: applications are public. Their own Authorization reaches them.
    const res = await byHost(ownHost('web'), '/v0/anything?x=1', { authorization: 'Basic dTpw' });
    expect(res.status, res.text).toBe(200);
    const echo = JSON.parse(res.text) as Echo;
    expect(echo).toMatchObject({ method: 'POST', url: '/v0/anything?x=1', authorization: 'Basic dTpw' });
    expect(echo.env).toMatchObject({
      PORT: '3000',
      BL_SERVER_PORT: '3000',
      BL_TYPE: 'application',
      BL_NAME: 'web',
      GREETING: 'hello app',
    });
    // The region label may be left out, like a sandbox host.
    expect((await byHost(`app-web-${ws}.localhost:${p.port}`)).status).toBe(200);
    const sse = await byHost(ownHost('web'), '/stream');
    expect(sse.headers['content-type']).toBe('text/event-stream');
    expect(sse.text.match(/^data: /gm)).toHaveLength(3);
    // A WebSocket upgrade is spliced through to the application.
    const frame = await new Promise<string>((resolve, reject) => {
      const s = connect(p.port, '127.0.0.1', () =>
        s.write(
          `GET /socket HTTP/1.1\r\nhost: ${ownHost('web')}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n` +
            'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n',
        ),
      );
      let raw = '';
      s.on('data', (c: Buffer) => {
        raw += c.toString('latin1');
        if (raw.includes('ws /socket')) {
          s.destroy();
          resolve(raw);
        }
      });
      s.on('error', reject);
      setTimeout(() => (s.destroy(), reject(new Error(`no frame: ${raw}`))), 10_000);
    });
    expect(frame).toMatch(/^HTTP\/1.1 101/);
    // Its stdout is its log, as for agents (GET …/replicas/logs, `tarmac logs application web`).
    const logs = await json<{ text: string }>(await api('/v0/applications/web/replicas/logs'));
    expect(logs.text).toContain('listening on 0.0.0.0:3000');
  }, 60_000);

  it('the spec’s body shape (image in revisions[]) deploys; a custom domain serves it by Host', async () => {
    const res = await api('/v0/applications', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'shop' },
        spec: { revisions: [{ image, port: 8081, memory: 256 }], urls: [{ domain: DOMAIN }] },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const shop = await until('shop', ['DEPLOYED', 'FAILED']);
    expect(shop.status, JSON.stringify(shop.events)).toBe('DEPLOYED');
    expect(shop.spec.revisions[0]).toMatchObject({ image, port: 8081 });
    const custom = await byHost(`${DOMAIN}:${p.port}`, '/hello');
    expect(custom.status, custom.text).toBe(200);
    expect(JSON.parse(custom.text)).toMatchObject({ url: '/hello', env: { PORT: '8081', BL_NAME: 'shop' } });
    // Host names are case-insensitive.
    expect((await byHost('SHOP.Example.Test')).status).toBe(200);
  }, 180_000);

  it('another workspace cannot claim the domain (409 naming the field); an unknown app host is 404', async () => {
    const res = await api(
      '/v0/applications',
      {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'thief' }, spec: { image, urls: [{ domain: DOMAIN }] } }),
      },
      OTHER,
    );
    expect(res.status).toBe(409);
    const body = await json<{ details: Array<{ field: string; message: string }> }>(res);
    expect(body.details[0]).toEqual({
      field: 'body.spec.urls.0.domain',
      message: `${DOMAIN} is already claimed by another workspace`,
    });
    // Still the first workspace's application.
    expect(JSON.parse((await byHost(DOMAIN)).text)).toMatchObject({ env: { BL_NAME: 'shop' } });
    const unknown = await byHost(ownHost('ghost'));
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain(`application ghost not found in workspace ${ws}`);
    // Another workspace's name on our host is a different host: also unknown.
    expect((await byHost(`app-web-${OTHER}.local.localhost`)).status).toBe(404);
    // The platform's own host is still the platform.
    expect((await p.api('/v0/applications/web', { headers: { 'x-service-workspace': ws } })).status).toBe(
      200,
    );
  }, 60_000);

  it('a platform restart re-attaches the replica on its port (3000): same process, no new container', async () => {
    const before = JSON.parse((await byHost(ownHost('web'))).text) as Echo;
    const containers = engineIds(home);
    for (const id of containers) ids.add(id);
    expect(await p.stop()).toBe(0);
    p = await start(home);
    const after = await byHost(ownHost('web'));
    expect(after.status, after.text).toBe(200);
    expect((JSON.parse(after.text) as Echo).boot).toBe(before.boot);
    expect(JSON.parse((await byHost(DOMAIN)).text)).toMatchObject({ env: { BL_NAME: 'shop' } });
    expect(engineIds(home).sort()).toEqual(containers.sort());
  }, 180_000);

  it('enabled: false → DEACTIVATING → DEACTIVATED, 503 naming the state; delete removes the replica', async () => {
    const current = await json<{ metadata: object; spec: Record<string, unknown> }>(
      await api('/v0/applications/shop'),
    );
    const put = await api('/v0/applications/shop', {
      method: 'PUT',
      body: JSON.stringify({ metadata: current.metadata, spec: { ...current.spec, enabled: false } }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await json<{ status: string }>(put)).status).toBe('DEACTIVATING');
    const off = await until('shop', ['DEACTIVATED'], 60_000);
    expect(off.events.map((e) => e.status)).toContain('DEACTIVATING');
    const refused = await byHost(DOMAIN);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toEqual({
      error: 'application shop is DEACTIVATED (spec.enabled is false)',
    });
    const before = engineIds(home).filter((id) => id.startsWith('rp-')).length;
    expect((await api('/v0/applications/web', { method: 'DELETE' })).status).toBe(200);
    await waitFor(
      'the application replica removed',
      async () => (engineIds(home).filter((id) => id.startsWith('rp-')).length < before ? true : undefined),
      30_000,
    );
    expect((await byHost(ownHost('web'))).status).toBe(404);
  }, 120_000);
});
