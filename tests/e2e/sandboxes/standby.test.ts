// Issue 4 "State": a sandbox with no request reaching it and no keep-alive process goes to STANDBY
// (every process frozen: a background counter stops advancing, read from the host without touching
// the sandbox); the first request resumes it before being forwarded, and the same process carries
// on counting. A keep-alive process keeps it RUNNING. State changes are events; lastUsedAt moves.
// No sandbox is frozen younger than TARMAC_STANDBY_MIN_AGE (10 s by default, kept here): sandboxd's
// start-up collections run first (issue 20; apps/platform standby.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  getSandbox,
  missingCapability,
  sbx,
  spawnProcess,
  startSandboxPlatform,
  upperFile,
  waitFor,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
// Written to a new file and renamed over the old one: `echo > /tmp/count` alone truncates before it
// writes, and a read from the host in between saw an empty file (CI did, twice).
const COUNTER = `sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.1; done'`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** TARMAC_STANDBY_MIN_AGE's default (standby.ts STANDBY_MIN_AGE_MS). */
const MIN_AGE_MS = 10_000;

describe.skipIf(missing !== null)(`standby and resume${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const names = ['idle', 'busy'];

  beforeAll(async () => {
    p = await startSandboxPlatform({ env: { TARMAC_STANDBY_AFTER: '2s' } });
  }, 15 * 60_000);

  afterAll(() => cleanUp(p, names), 120_000);

  it('freezes an idle sandbox and resumes it on the next request with its processes still running', async () => {
    const before = new Set(engineIds(p!.home));
    const created = Date.now();
    await createSandbox(p!, 'idle');
    const id = engineIds(p!.home).find((x) => !before.has(x))!;
    await spawnProcess(p!, 'idle', COUNTER, { name: 'counter' });
    await waitFor(
      'the counter to start',
      async () => (Number(upperFile(p!.home, id, 'tmp/count')) > 0 ? true : undefined),
      5_000,
    );

    const standby = await waitSandbox(p!, 'idle', (s) => s.state === 'STANDBY', 'STANDBY', 30_000);
    expect(standby.events.map((e) => e.type)).toContain('Standby');
    // Idle for 2 s from its first seconds, but frozen only once 10 s old.
    const frozenEvent = standby.events.find((e) => e.type === 'Standby');
    expect(Date.parse(frozenEvent!.time) - created).toBeGreaterThanOrEqual(MIN_AGE_MS);
    expect(standby.lastUsedAt).toBeDefined();
    const frozenAt = Number(upperFile(p!.home, id, 'tmp/count'));
    await sleep(1000);
    expect(Number(upperFile(p!.home, id, 'tmp/count'))).toBe(frozenAt); // CPU zero: nothing ran

    const t = performance.now();
    const res = await sbx(p!, 'idle', '/health');
    const ms = performance.now() - t;
    expect(res.status).toBe(200);
    expect(ms).toBeLessThan(1000); // the bench measures the real resume cost; this only bounds it
    await sleep(500);
    expect(Number(upperFile(p!.home, id, 'tmp/count'))).toBeGreaterThan(frozenAt); // same process, counting on
    const resumed = await waitSandbox(
      p!,
      'idle',
      (s) => s.state === 'RUNNING',
      'RUNNING in the record',
      5000,
    );
    expect(resumed.events.map((e) => e.type)).toContain('Resume');
  });

  it('keeps a sandbox with a keep-alive process out of STANDBY', async () => {
    const created = Date.now();
    await createSandbox(p!, 'busy');
    await spawnProcess(p!, 'busy', 'sleep 600', { name: 'keeper', keepAlive: true, timeout: 0 });
    // Past the minimum age, then three standby periods: only the keep-alive process holds it.
    await sleep(Math.max(0, created + MIN_AGE_MS - Date.now()) + 6000);
    expect((await getSandbox(p!, 'busy')).state).toBe('RUNNING');
    await sbx(p!, 'busy', '/process/keeper/kill', { method: 'DELETE' });
    await waitSandbox(
      p!,
      'busy',
      (s) => s.state === 'STANDBY',
      'STANDBY once the keep-alive process ended',
      15_000,
    );
  });

  it('an update of a STANDBY sandbox (PUT) keeps it and its processes: nothing is recreated', async () => {
    const s = await waitSandbox(p!, 'idle', (x) => x.state === 'STANDBY', 'idle back in STANDBY', 15_000);
    const id = engineIds(p!.home).find((x) => upperFile(p!.home, x, 'tmp/count') !== undefined)!;
    const before = Number(upperFile(p!.home, id, 'tmp/count'));
    const put = await p!.api('/v0/sandboxes/idle', {
      method: 'PUT',
      body: JSON.stringify({ metadata: { name: 'idle', labels: { team: 'a' } }, spec: s.spec }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const after = await waitSandbox(
      p!,
      'idle',
      (x) => x.status === 'DEPLOYED' && x.events.at(-1)?.type === 'Deployment',
      'redeployed',
      15_000,
    );
    expect(after.state).toBe('STANDBY'); // still frozen, not restarted
    expect(Number(upperFile(p!.home, id, 'tmp/count'))).toBe(before);
    expect((await sbx(p!, 'idle', '/health')).status).toBe(200);
    // The same counter goes on past `before` (a restarted one would start again from 1).
    await waitFor(
      'the counter to go on past its frozen value',
      async () => (Number(upperFile(p!.home, id, 'tmp/count')) > before ? true : undefined),
      5_000,
    );
  });
});
