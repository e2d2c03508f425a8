// Issue 16, triggers and metering of the run plane, end to end on the real platform, real buildah
// and real runc: the e2e Node server (app-image.ts) built into an agent with three triggers —
//   - an `http` trigger with `authenticationType: public` on /hooks/echo: reachable without a
//     token while the agent's own URL still refuses one; a private one under the agent's URL;
//   - an `http-async` trigger on /later with a callbackUrl on a receiver in this test (loopback,
//     opened by TARMAC_CALLBACK_ALLOW): 202 {success, id} at once, then a callback whose
//     X-Blaxel-Signature the receiver verifies with the secret the create returned once; a
//     receiver that fails is retried; `?async=true` on the agent's URL does the same;
//   - the attack: a disabled agent whose async triggers call back the platform's own API (even on
//     the allowed loopback address), IPv6 loopback and the metadata address — refused (403), and
//     nothing reaches the receivers;
// and the billing metrics API reports the agent's compute GB-s (replica memory × its running
// time, within the bounds of this test's clock), its image storage and the async request count.
// Last, an accepted async request survives the platform's SIGKILL: the restarted platform runs
// it and delivers its callback under the same id (triggers/async-spool.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import { verifyCallback } from '../../../apps/platform/src/planes/run/triggers/callback-signature.js';
import type { RunningPlatform } from '../support/platform.js';
import { json, missingBuildCapability, startSandboxPlatform, waitFor } from '../sandboxes/support.js';
import { closeRunPlatform } from '../support/run-workloads.js';
import { APP_MEMBERS, type Echo } from './app-image.js';

const skip = missingBuildCapability();
const MEMORY_MB = 256;

interface Trigger {
  id: string;
  type: string;
  configuration: { callbackSecret?: string; path?: string };
}
interface AgentView {
  status: string;
  spec: { runtime?: { image?: string }; triggers?: Trigger[] };
  events: Array<{ status: string; message: string; time: string }>;
}
interface Callback {
  body: string;
  signature: string | undefined;
  timestamp: string | undefined;
  answered: number;
}

describe.skipIf(skip !== null)(`run plane: triggers and metering${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let ws = '';
  let workspaceId = '';
  let secret = '';
  let deployedAt = 0;
  const ids = new Set<string>();
  let receiver: Server;
  let receiverPort = 0;
  let failNext = 0;
  const callbacks: Callback[] = [];
  let v6: Server | undefined;
  const v6Hits: string[] = [];

  const api = (path: string, init: RequestInit = {}) =>
    p.api(path, {
      ...init,
      headers: { 'x-service-workspace': ws, ...(init.headers as Record<string, string>) },
    });
  const run = (path: string, init: RequestInit = {}, key: string | null = p.credentials.apiKey) =>
    fetch(`${p.credentials.runUrl}/${ws}/${path}`, {
      ...init,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  const record = async (name: string) => json<AgentView>(await api(`/v0/agents/${name}`));
  const callbackOf = (id: string) =>
    waitFor(
      `a verified callback for ${id}`,
      async () =>
        callbacks.find(
          (c) =>
            c.answered < 300 &&
            (JSON.parse(c.body) as { request_id: string }).request_id === id &&
            verifyCallback(secret, c.body, c.signature, c.timestamp),
        ),
      60_000,
    );

  const PLATFORM_ENV = {
    TARMAC_BRIDGE: 'tarmactr0',
    TARMAC_SUBNET: '10.115.0.0/16',
    TARMAC_RUN_READY_TIMEOUT_SECONDS: '30',
    TARMAC_CALLBACK_ALLOW: '127.0.0.1/32',
    TARMAC_METERING_INTERVAL_SECONDS: '1',
  };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const answered = failNext > 0 ? (failNext--, 500) : 200;
        callbacks.push({
          body,
          signature: req.headers['x-blaxel-signature'] as string | undefined,
          timestamp: req.headers['x-blaxel-timestamp'] as string | undefined,
          answered,
        });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverPort = (receiver.address() as AddressInfo).port;
    // IPv6 loopback, outside the allow-list: must never be called (when the host has ::1).
    v6 = createServer((req, res) => (v6Hits.push(req.url ?? ''), res.end()));
    await new Promise<void>((r) => {
      v6!.once('error', () => ((v6 = undefined), r()));
      v6!.listen(receiverPort, '::1', r);
    });
    p = await startSandboxPlatform({ env: PLATFORM_ENV });
    ws = p.credentials.workspace;
    workspaceId = (await json<{ id?: string }>(await api(`/v0/workspaces/${ws}`))).id ?? '';
    const open = await api('/v0/agents?upload=true', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'echo' },
        spec: {
          runtime: { memory: MEMORY_MB },
          triggers: [
            {
              id: 'open',
              type: 'http',
              configuration: { path: '/hooks/echo', authenticationType: 'public' },
            },
            { id: 'sync', type: 'http', configuration: { path: '/agents/echo/sync' } },
            {
              id: 'later',
              type: 'http-async',
              configuration: {
                path: '/later',
                callbackUrl: `http://127.0.0.1:${receiverPort}/cb`,
                retry: 2,
                timeout: 120,
              },
            },
          ],
        },
      }),
    });
    const opened = await json<AgentView>(open.clone());
    expect(open.status, JSON.stringify(opened)).toBe(200);
    // Returned once, on create (reference §2.5); masked afterwards.
    secret = opened.spec.triggers?.find((t) => t.id === 'later')?.configuration.callbackSecret ?? '';
    expect(secret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const put = await fetch(open.headers.get('x-blaxel-upload-url')!, {
      method: 'PUT',
      body: zipOf(APP_MEMBERS),
      headers: { 'content-type': 'application/zip' },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const built = await waitFor(
      'agent echo DEPLOYED',
      async () => {
        const r = await record('echo');
        return r.status === 'DEPLOYED' || r.status === 'FAILED' ? r : undefined;
      },
      6 * 60_000,
    );
    expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
    expect(built.spec.triggers?.find((t) => t.id === 'later')?.configuration.callbackSecret).toBe('********');
    deployedAt = Date.parse(built.events.at(-1)!.time);
  }, 10 * 60_000);

  afterAll(async () => {
    if (p) {
      const list = await json<Array<{ metadata: { name: string } }>>(await api('/v0/agents')).catch(() => []);
      for (const r of list) await api(`/v0/agents/${r.metadata.name}`, { method: 'DELETE' });
      await closeRunPlatform(p, ids, workspaceId);
    }
    await new Promise<void>((r) => receiver.close(() => r()));
    if (v6) await new Promise<void>((r) => v6!.close(() => r()));
  }, 180_000);

  it('an http trigger path reaches the agent; a public one needs no token, the agent URL still does', async () => {
    const open = await run('hooks/echo/deep/path?x=1', { method: 'POST', body: 'via trigger' }, null);
    expect(open.status).toBe(200);
    expect(await json<Echo>(open)).toMatchObject({
      url: '/deep/path?x=1',
      body: 'via trigger',
      authorization: null,
    });
    expect((await run('agents/echo', { method: 'POST', body: '{}' }, null)).status).toBe(401);
    expect((await run('agents/echo', { method: 'POST', body: '{}' }, 'not-a-key')).status).toBe(401);
    // A private trigger under the agent's own URL: a token, and the agent sees its root.
    expect((await run('agents/echo/sync', { method: 'POST' }, null)).status).toBe(401);
    const sync = await run('agents/echo/sync', { method: 'POST', body: 's' });
    expect(sync.status).toBe(200);
    expect((await json<Echo>(sync)).url).toBe('/');
  });

  it('http-async answers 202 at once and delivers a signed callback with the agent’s answer', async () => {
    const res = await run('later', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-thread-id': 't-async' },
      body: JSON.stringify({ inputs: 'later please' }),
    });
    expect(res.status).toBe(202);
    const accepted = await json<{ success: boolean; id: string }>(res);
    expect(accepted).toMatchObject({ success: true });
    const cb = await callbackOf(accepted.id);
    const payload = JSON.parse(cb.body) as {
      status_code: number;
      response_body: string;
      response_length: number;
      timestamp: number;
    };
    expect(payload.status_code).toBe(200);
    expect(payload.response_length).toBe(Buffer.byteLength(payload.response_body));
    expect(String(payload.timestamp)).toBe(cb.timestamp);
    const echo = JSON.parse(payload.response_body) as Echo;
    expect(echo).toMatchObject({ url: '/', thread: 't-async', authorization: null });
    expect(JSON.parse(echo.body)).toEqual({ inputs: 'later please' });
    // A forged body does not verify with the same signature.
    expect(verifyCallback(secret, cb.body.replace('later', 'LATER'), cb.signature, cb.timestamp)).toBe(false);
  });

  it('a failing receiver is retried with backoff; ?async=true on the agent URL is async too', async () => {
    failNext = 1;
    const res = await run('agents/echo/x?async=true&k=v', { method: 'POST', body: 'retry me' });
    expect(res.status).toBe(202);
    const { id } = await json<{ id: string }>(res);
    const cb = await callbackOf(id);
    const attempts = callbacks.filter(
      (c) => (JSON.parse(c.body) as { request_id: string }).request_id === id,
    );
    expect(attempts.map((a) => a.answered)).toEqual([500, 200]);
    const echo = JSON.parse((JSON.parse(cb.body) as { response_body: string }).response_body) as Echo;
    expect(echo).toMatchObject({ url: '/x?k=v', body: 'retry me' });
  });

  it('the attack: callbacks to the platform’s own API, IPv6 loopback or the metadata address are refused', async () => {
    const image = (await record('echo')).spec.runtime?.image;
    const targets = [
      `http://127.0.0.1:${p.port}/v0/workspaces`, // the platform's own port, even on the allowed address
      `http://localhost:${p.port}/v0/agents`,
      `http://[::1]:${receiverPort}/cb`,
      'http://169.254.169.254/latest/meta-data/',
    ];
    const made = await api('/v0/agents', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'evil' },
        spec: {
          enabled: false, // no replica needed: the callback is checked before anything runs
          runtime: { image, memory: MEMORY_MB },
          triggers: targets.map((callbackUrl, i) => ({
            id: `t${i}`,
            type: 'http-async',
            configuration: { path: `/evil/${i}`, callbackUrl, authenticationType: 'public' },
          })),
        },
      }),
    });
    expect(made.status, await made.clone().text()).toBe(200);
    const before = callbacks.length;
    for (const [i, target] of targets.entries()) {
      const res = await waitFor(`evil trigger ${i} mounted`, async () => {
        const r = await run(`evil/${i}`, { method: 'POST', body: 'steal' }, null);
        return r.status === 404 ? undefined : r;
      });
      const body = await json<{ error: string }>(res);
      expect(res.status, `${target}: ${body.error}`).toBe(403);
      expect(body.error).toMatch(/TARMAC_CALLBACK_ALLOW/);
    }
    await new Promise((r) => setTimeout(r, 1000));
    expect(callbacks.length).toBe(before);
    expect(v6Hits).toEqual([]);
  });

  it('metering: the agent’s compute GB-s, image storage and async request count', async () => {
    await new Promise((r) => setTimeout(r, 2500)); // at least two meter passes
    const hour = 3_600_000;
    const params = new URLSearchParams({
      startTime: new Date(Math.floor(deployedAt / hour) * hour - hour).toISOString(),
      endTime: new Date(Math.floor(Date.now() / hour) * hour + hour).toISOString(),
      groupBy: 'resource_name,billing_dimension',
    });
    const until = Date.now();
    const res = await p.api(`/v0/accounts/${p.credentials.accountId}/metrics?${params.toString()}`);
    expect(res.status).toBe(200);
    const metrics = await json<{
      data: Array<{
        resourceName?: string;
        billingDimension?: string;
        summary: { usage?: number; cost: number };
      }>;
    }>(res);
    const of = (dimension: string) =>
      metrics.data.find((e) => e.resourceName === 'echo' && e.billingDimension === dimension)?.summary;
    const compute = of('agent_compute_runtime_gbs');
    expect(compute, JSON.stringify(metrics.data)).toBeDefined();
    // One replica of 256 MB, running from before DEPLOYED (its container's creation) until now:
    // at least the time since DEPLOYED minus a pass, at most since the test started building.
    const gb = MEMORY_MB / 1024;
    expect(compute!.usage!).toBeGreaterThanOrEqual(gb * ((until - deployedAt) / 1000 - 2.5));
    expect(compute!.usage!).toBeLessThanOrEqual(gb * ((until - deployedAt) / 1000 + 60));
    expect(of('agent_image_storage_gbs')?.usage).toBeGreaterThan(0);
    expect(of('agent_async_requests_count')?.usage).toBe(2);
    expect(of('sandbox_snapshot_storage_gbs')).toBeUndefined(); // never frozen here
    expect(metrics.data.some((e) => e.resourceName === 'evil')).toBe(false); // no replica, no request
  });

  it('an accepted async request survives a SIGKILL of the platform: the restart runs it and calls back', async () => {
    const res = await run('later/slow?ms=3000', { method: 'POST', body: 'do not lose me' });
    expect(res.status).toBe(202);
    const { id } = await json<{ id: string }>(res);
    expect(await p.stop('SIGKILL')).toBe(137); // while the agent works on it: no callback yet
    expect(callbacks.some((c) => c.body.includes(id))).toBe(false);
    p = await startSandboxPlatform({ home: p.home, env: PLATFORM_ENV });
    const cb = await callbackOf(id);
    const payload = JSON.parse(cb.body) as { status_code: number; response_body: string };
    expect(payload.status_code).toBe(200);
    expect(payload.response_body).toContain('boot');
    // Delivered, so gone from the spool: no second callback after another restart. The platform
    // removes the file once the receiver has answered, which the receiver may see before it.
    const spooled = () => readdirSync(join(p.home, 'run', 'async')).filter((f) => f.endsWith('.req'));
    await waitFor('the delivered request gone from the spool', async () =>
      spooled().length === 0 ? true : undefined,
    );
    expect(spooled()).toEqual([]);
  }, 120_000);
});
