// Issue 16, scale to zero in two steps, end to end on the real platform, real buildah and real runc
// (planes/run/idle-policy.ts), with short idle windows set by TARMAC_RUN_STANDBY_AFTER_SECONDS and
// TARMAC_RUN_STOP_AFTER_SECONDS: an idle agent's replica is frozen (runc shows it paused; status
// stays DEPLOYED, an event says STANDBY) → the next requests, several at once, resume it and the
// process's memory is intact (same BOOT, the thread history goes on) → an open WebSocket keeps it
// running → idle longer, the container is removed (event: stopped) → the next request is held
// while a new replica starts and then served; a platform restart keeps a frozen replica frozen and
// resumes it on the next request (same process); minScale 1 keeps a replica running, never frozen.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import type { RunningPlatform } from '../support/platform.js';
import { closeRunPlatform } from '../support/run-workloads.js';
import {
  engineIds,
  json,
  missingBuildCapability,
  RUNC_ROOT,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import { APP_MEMBERS, type Echo } from './app-image.js';

const skip = missingBuildCapability();
const STANDBY_S = 3;
const STOP_S = 12;

interface Record_ {
  status: string;
  spec: { runtime?: { image?: string } };
  events: Array<{ status: string; message: string }>;
}

/** What runc says of a container: running, paused (frozen), or gone. */
function runcState(id: string): string {
  try {
    const out = execFileSync('runc', ['--root', RUNC_ROOT, 'state', id], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return (JSON.parse(out) as { status: string }).status;
  } catch {
    return 'gone';
  }
}

/** The container's CFS quota (µs per 100 ms), read on the host from its cgroup (v1 or v2). */
function cpuQuotaOf(home: string, id: string): string {
  const { cgroup } = JSON.parse(readFileSync(join(home, 'sandboxes', id, 'sandbox.json'), 'utf8')) as {
    cgroup: string;
  };
  const v1 = join('/sys/fs/cgroup/cpu', cgroup, 'cpu.cfs_quota_us');
  return existsSync(v1)
    ? readFileSync(v1, 'utf8').trim()
    : readFileSync(join('/sys/fs/cgroup', cgroup, 'cpu.max'), 'utf8').split(' ')[0]!;
}
describe.skipIf(skip !== null)(`run plane: STANDBY, then stopped${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let home = '';
  let ws = '';
  let image = '';
  let workspaceId = '';
  const ids = new Set<string>();
  const start = (h?: string) =>
    startSandboxPlatform({
      ...(h ? { home: h } : {}),
      env: {
        TARMAC_BRIDGE: 'tarmacsl0',
        TARMAC_SUBNET: '10.105.0.0/16',
        TARMAC_RUN_READY_TIMEOUT_SECONDS: '20',
        TARMAC_RUN_HOLD_SECONDS: '60',
        TARMAC_RUN_STANDBY_AFTER_SECONDS: String(STANDBY_S),
        TARMAC_RUN_STOP_AFTER_SECONDS: String(STOP_S),
      },
    });
  const api = (path: string, init: RequestInit = {}) =>
    p.api(path, {
      ...init,
      headers: { 'x-service-workspace': ws, ...(init.headers as Record<string, string>) },
    });
  const run = (path: string, init: RequestInit = {}) =>
    fetch(`${p.credentials.runUrl}/${ws}/${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${p.credentials.apiKey}`,
        ...(init.headers as Record<string, string>),
      },
    });
  const record = async (name: string) => json<Record_>(await api(`/v0/agents/${name}`));
  /** The agent's replica container (the logs route: reading it neither resumes nor counts as use). */
  const replicaOf = async (name: string) =>
    (await json<{ replica: string | null }>(await api(`/v0/agents/${name}/replicas/logs`))).replica;
  const chat = async (thread: string, body: string) => {
    const res = await run('agents/sleepy/chat', {
      method: 'POST',
      body,
      headers: { 'x-service-thread-id': thread },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await json<{ history: string[] }>(res)).history;
  };
  const boot = async () => {
    const res = await run('agents/sleepy', { method: 'POST', body: '{"inputs":"hi"}' });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await json<Echo>(res)).boot;
  };
  const untilState = (id: string, state: string, ms = 30_000) =>
    waitFor(`${id} ${state}`, async () => (runcState(id) === state ? true : undefined), ms);
  const untilEvent = (name: string, pattern: RegExp, ms = 30_000) =>
    waitFor(
      `an event of ${name} matching ${pattern}`,
      async () => {
        const r = await record(name);
        return r.events.some((e) => pattern.test(e.message)) ? r : undefined;
      },
      ms,
    );

  beforeAll(async () => {
    p = await start();
    home = p.home;
    ws = p.credentials.workspace;
    workspaceId = (await json<{ id?: string }>(await api(`/v0/workspaces/${ws}`))).id ?? '';
    const open = await api('/v0/agents?upload=true', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'sleepy' }, spec: { runtime: { memory: 256 } } }),
    });
    expect(open.status, await open.clone().text()).toBe(200);
    const put = await fetch(open.headers.get('x-blaxel-upload-url')!, {
      method: 'PUT',
      body: zipOf(APP_MEMBERS),
      headers: { 'content-type': 'application/zip' },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const built = await waitFor(
      'sleepy DEPLOYED',
      async () => {
        const r = await record('sleepy');
        return ['DEPLOYED', 'FAILED'].includes(r.status) ? r : undefined;
      },
      6 * 60_000,
    );
    expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
    image = built.spec.runtime?.image ?? '';
  }, 10 * 60_000);

  afterAll(async () => {
    if (!p) return;
    for (const name of ['sleepy', 'warm']) await api(`/v0/agents/${name}`, { method: 'DELETE' });
    await closeRunPlatform(p, ids, workspaceId);
  }, 180_000);

  it('idle → STANDBY (frozen, DEPLOYED); concurrent requests resume it with its memory intact', async () => {
    const first = await boot();
    expect(await chat('t1', 'a')).toEqual(['a']);
    const replica = (await replicaOf('sleepy'))!;
    expect(runcState(replica)).toBe('running');
    await untilState(replica, 'paused', (STANDBY_S + 10) * 1000);
    const r = await untilEvent('sleepy', /^Replica rp-\S+ in STANDBY after \d+ s idle/);
    expect(r.status).toBe('DEPLOYED');
    // Five requests at once share one thaw; every one reaches the same process.
    const t = performance.now();
    const boots = await Promise.all(Array.from({ length: 5 }, () => boot()));
    console.log(`5 concurrent requests from STANDBY: ${(performance.now() - t).toFixed(1)} ms`);
    expect(new Set(boots)).toEqual(new Set([first]));
    expect(await chat('t1', 'b')).toEqual(['a', 'b']); // process memory kept
    expect(runcState(replica)).toBe('running');
    expect(await replicaOf('sleepy')).toBe(replica); // no new container
  }, 60_000);

  it('an open WebSocket keeps the replica running past the STANDBY window', async () => {
    const replica = (await replicaOf('sleepy'))!;
    const socket = new WebSocket(`${p.credentials.runUrl.replace(/^http/, 'ws')}/${ws}/agents/sleepy/ws`, {
      headers: { authorization: `Bearer ${p.credentials.apiKey}` },
    });
    await new Promise((resolve, reject) => {
      socket.once('message', resolve);
      socket.once('error', reject);
    });
    await new Promise((res) => setTimeout(res, (STANDBY_S + 3) * 1000));
    expect(runcState(replica)).toBe('running');
    socket.terminate();
    await untilState(replica, 'paused', (STANDBY_S + 10) * 1000);
  }, 60_000);

  it('idle longer → stopped (container removed, DEPLOYED); the next request is held, then served', async () => {
    const replica = (await replicaOf('sleepy'))!;
    const before = await boot(); // resumes; the stop window counts from here
    // runc forgets it first, then the engine removes its files.
    await waitFor(
      'the replica removed',
      async () =>
        runcState(replica) === 'gone' && !engineIds(home).some((id) => id.startsWith('rp-'))
          ? true
          : undefined,
      (STOP_S + 15) * 1000,
    );
    const r = await untilEvent(
      'sleepy',
      /^Replica rp-\S+ stopped after \d+ s idle .*the next request starts one/,
    );
    expect(r.status).toBe('DEPLOYED');
    // Nothing starts by itself while at zero.
    await new Promise((res) => setTimeout(res, 2000));
    expect(engineIds(home).filter((id) => id.startsWith('rp-'))).toEqual([]);
    const t = performance.now();
    const after = await boot(); // held while a replica starts, never an immediate 503
    console.log(`first request after scale to zero: ${(performance.now() - t).toFixed(0)} ms`);
    expect(after).not.toBe(before); // a new process
    // It started with a CPU boost (TARMAC_RUN_STARTUP_CPU_CORES, 1 core) that ended once it
    // answered: its quota is its memory's share again, 256 MB / 2048 of a 100 ms period.
    const fresh = (await replicaOf('sleepy'))!;
    expect(cpuQuotaOf(home, fresh)).toBe('12500');
    expect(await chat('t1', 'c')).toEqual(['c']); // memory did not survive a stop, as documented
    const woke = await untilEvent(
      'sleepy',
      /^Replica rp-\S+ started for a request after scale to zero \(\d+ ms\)/,
    );
    expect(woke.status).toBe('DEPLOYED');
  }, 90_000);

  it('a platform restart keeps a frozen replica frozen; the next request resumes the same process', async () => {
    const before = await boot();
    const replica = (await replicaOf('sleepy'))!;
    await untilState(replica, 'paused', (STANDBY_S + 10) * 1000);
    for (const id of engineIds(home)) ids.add(id);
    expect(await p.stop()).toBe(0);
    expect(runcState(replica)).toBe('paused'); // replicas outlive the platform
    p = await start(home);
    const adopted = await waitFor(
      'the replica re-attached',
      () => replicaOf('sleepy').catch(() => undefined),
      30_000,
    );
    expect(adopted).toBe(replica);
    expect(runcState(replica)).toBe('paused'); // adopted in STANDBY, not probed awake
    expect((await record('sleepy')).status).toBe('DEPLOYED');
    expect(await boot()).toBe(before);
    expect(runcState(replica)).toBe('running');
  }, 120_000);

  it('minScale 1: the replica is kept running, never frozen nor stopped', async () => {
    const res = await api('/v0/agents', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'warm' },
        spec: { runtime: { image, memory: 256, minScale: 1 } },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await waitFor(
      'warm DEPLOYED',
      async () => ((await record('warm')).status === 'DEPLOYED' ? true : undefined),
      60_000,
    );
    const replica = (await replicaOf('warm'))!;
    await new Promise((r) => setTimeout(r, (STANDBY_S + 3) * 1000));
    expect(runcState(replica)).toBe('running');
    expect((await record('warm')).events.some((e) => /STANDBY|stopped after/.test(e.message))).toBe(false);
  }, 90_000);
});
