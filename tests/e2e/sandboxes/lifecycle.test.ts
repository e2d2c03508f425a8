// Issue 4 "States, status and lifecycle" and "The sandbox gateway" on the built platform with real
// sandboxes: create -> DEPLOYED/RUNNING, sandboxd's API through the gateway (path- and host-style),
// auth, an unknown image is a 400 INVALID_IMAGE, delete -> DELETING -> TERMINATED, hidden from lists
// unless showTerminated=true, and nothing left on the host.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  deleteSandbox,
  exec,
  json,
  missingCapability,
  sbx,
  startSandboxPlatform,
  waitFor,
  type SandboxView,
} from './support.js';

const missing = missingCapability();

describe.skipIf(missing !== null)(`sandbox lifecycle${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const names = ['life-a', 'life-b', 'life-c'];

  beforeAll(async () => {
    p = await startSandboxPlatform();
  }, 15 * 60_000);

  afterAll(() => cleanUp(p, names), 120_000);

  it('creates a sandbox that becomes DEPLOYED and RUNNING, with events saying so', async () => {
    const s = await createSandbox(p!, 'life-a');
    expect(s.state).toBe('RUNNING');
    expect(s.events.map((e) => e.status)).toEqual(expect.arrayContaining(['DEPLOYING', 'DEPLOYED']));
  });

  it('serves sandboxd through the gateway, path-style and host-style', async () => {
    const health = await sbx(p!, 'life-a', '/health');
    expect(health.status).toBe(200);
    expect(await json<{ status: string }>(health)).toMatchObject({ status: 'ok' });

    const r = await exec(p!, 'life-a', 'echo hello from $(hostname)');
    expect(r.exitCode).toBe(0);
    expect(r.stdout?.trim()).toBe('hello from life-a');

    const { workspace, apiKey } = p!.credentials;
    const hostStyle = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: p!.port,
          path: '/health',
          headers: {
            host: `sbx-life-a-${workspace}.local.localhost:${p!.port}`,
            authorization: `Bearer ${apiKey}`,
          },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.once('error', reject);
      req.end();
    });
    expect(hostStyle.status).toBe(200);
    expect(JSON.parse(hostStyle.body)).toMatchObject({ status: 'ok' });
  });

  it('refuses the sandbox API without credentials (401) and for unknown sandboxes (404), as {error}', async () => {
    const anon = await fetch(`${p!.url}/${p!.credentials.workspace}/sandboxes/life-a/health`);
    expect(anon.status).toBe(401);
    expect(await json(anon)).toEqual({ error: expect.any(String) });
    const unknown = await sbx(p!, 'nope', '/health');
    expect(unknown.status).toBe(404);
  });

  it('writes go to the sandbox overlay: apt/pip/npm-style writes work and stay inside', async () => {
    const r = await exec(
      p!,
      'life-a',
      'mkdir -p /usr/local/lib/x && echo ok > /usr/local/lib/x/f && cat /usr/local/lib/x/f',
    );
    expect(r.stdout?.trim()).toBe('ok');
    await createSandbox(p!, 'life-b');
    const other = await exec(p!, 'life-b', 'test -e /usr/local/lib/x/f && echo leaked || echo clean');
    expect(other.stdout?.trim()).toBe('clean');
  });

  it('rejects an unknown image with 400 INVALID_IMAGE at create time', async () => {
    const res = await p!.api('/v0/sandboxes', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'badimg' }, spec: { runtime: { image: 'nope/not-here:1' } } }),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await json(res))).toMatch(/INVALID_IMAGE|invalid_image/);
  });

  it('deletes: DELETING then TERMINATED, hidden from lists unless showTerminated=true', async () => {
    await deleteSandbox(p!, 'life-b');
    const list = await json<SandboxView[]>(await p!.api('/v0/sandboxes'));
    expect(list.map((s) => s.metadata.name)).not.toContain('life-b');
    const all = await json<SandboxView[]>(await p!.api('/v0/sandboxes?showTerminated=true'));
    const gone = all.find((s) => s.metadata.name === 'life-b');
    expect(gone?.status).toBe('TERMINATED');
    expect(gone?.events.map((e) => e.status)).toEqual(expect.arrayContaining(['DELETING', 'TERMINATED']));
    expect((await sbx(p!, 'life-b', '/health')).status).toBe(404);
  });

  it('purges a terminated record after lifecycle.terminatedRetention', async () => {
    await createSandbox(p!, 'life-c', { lifecycle: { terminatedRetention: '2s' } });
    await deleteSandbox(p!, 'life-c');
    const t = Date.now();
    await waitFor(
      'purged',
      async () => ((await p!.api('/v0/sandboxes/life-c')).status === 404 ? true : undefined),
      15_000,
    );
    expect(Date.now() - t).toBeGreaterThanOrEqual(1000); // kept for a while, not dropped at once
  });
});
