// Issue 17: executions survive a platform restart (running task containers re-attached, queued
// ones started, nothing run twice), and a cron trigger every minute fires within 5 s of the
// minute (a real minute, UTC), once per minute even with a restart in between.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  engineIds,
  hostLeftovers,
  json,
  missingCapability,
  removeHome,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import {
  createJob,
  expectStatsAddUp,
  importJobImage,
  Receiver,
  startExecution,
  waitExecution,
} from './support.js';

const missing = missingCapability();
const SUBNET = '10.166.0.0/16';
const GATEWAY = '10.166.0.1';

describe.skipIf(missing !== null)(`job restart and cron${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let home: string | undefined;
  const receiver = new Receiver();
  let dropImage: (() => void) | undefined;
  const image = `e2e/jobcron-${process.pid}:1`;
  const ids = new Set<string>();
  const start = (h?: string) =>
    startSandboxPlatform({
      ...(h ? { home: h } : {}),
      env: {
        TARMAC_BRIDGE: 'tjobs1',
        TARMAC_SUBNET: SUBNET,
        TARMAC_EGRESS_ALLOW_CIDRS: `${GATEWAY}/32`,
      },
    });

  beforeAll(async () => {
    p = await start();
    home = p.home;
    await receiver.listen(GATEWAY);
    dropImage = await importJobImage(p, image);
    await createJob(p, 'batch', { image, envs: [{ name: 'RECEIVER', value: receiver.url }], timeout: 300 });
  }, 15 * 60_000);

  afterAll(async () => {
    dropImage?.();
    await receiver.close();
    if (p) {
      for (const id of engineIds(p.home)) ids.add(id);
      await p.stop();
    }
    expect(hostLeftovers([...ids])).toEqual([]);
    if (home) removeHome(home);
  }, 120_000);

  it('a restart mid-execution loses and duplicates nothing', async () => {
    receiver.plan = () => 'sleep 4';
    const id = await startExecution(p!, 'batch', {
      tasks: Array.from({ length: 6 }, (_, i) => ({ i })),
      parallelism: 2,
    });
    await waitFor(
      '2 tasks running',
      async () => (receiver.of(id, 'start').length >= 2 ? true : undefined),
      60_000,
    );
    for (const e of engineIds(home!)) ids.add(e);
    expect(await p!.stop()).toBe(0);
    // The task containers kept running while no platform was up.
    const during = receiver.of(id, 'end').length;
    p = await start(home);
    const done = await waitExecution(p, 'batch', id, 180_000);
    for (const e of engineIds(home!)) ids.add(e);
    expect(done.status, JSON.stringify(done.tasks)).toBe('succeeded');
    expect(done.stats).toMatchObject({ total: 6, success: 6, retried: 0 });
    expectStatsAddUp(done);
    const starts = receiver.of(id, 'start');
    // Each task exactly once, on its first attempt.
    expect(starts.map((e) => `${e.task}/${e.attempt}`).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `${i}/1`).sort(),
    );
    expect(receiver.of(id, 'end')).toHaveLength(6);
    expect(receiver.maxConcurrent(id)).toBeLessThanOrEqual(2);
    expect(during).toBeGreaterThanOrEqual(0);
  }, 300_000);

  it('a cron trigger every minute fires within 5 s of the minute, once per minute across a restart', async () => {
    receiver.plan = () => 'ok';
    const res = await p!.api('/v0/jobs', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'ticker' },
        spec: {
          runtime: { image, memory: 128, envs: [{ name: 'RECEIVER', value: receiver.url }] },
          triggers: [
            {
              id: 'every-minute',
              type: 'cron',
              configuration: { schedule: '* * * * *', tasks: [{ from: 'cron' }] },
            },
          ],
        },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const list = async () =>
      json<{ data: { metadata: { id: string; createdAt: string } }[] }>(
        await p!.api('/v0/jobs/ticker/executions', { version: '2026-04-28' }),
      );
    const first = await waitFor(
      'a cron execution',
      async () => ((await list()).data.length >= 1 ? (await list()).data : undefined),
      130_000,
    );
    const created = Date.parse(first[0]!.metadata.createdAt);
    expect(created % 60_000, first[0]!.metadata.createdAt).toBeLessThan(5000);
    expect(first[0]!.metadata.id).toMatch(/^cron-every-minute-\d+$/);
    const firstExec = first[0]!.metadata.id;
    const done = await waitExecution(p!, 'ticker', firstExec, 120_000);
    expect(done.status, JSON.stringify(done.tasks)).toBe('succeeded');
    expect(JSON.parse(receiver.of(firstExec, 'start')[0]?.data ?? '{}')).toEqual({
      tasks: [{ from: 'cron' }],
    });
    // Restart within the same minute when there is time left: it must not fire again.
    for (const e of engineIds(home!)) ids.add(e);
    await p!.stop();
    p = await start(home);
    await new Promise((r) => setTimeout(r, 4000));
    const after = (await list()).data;
    const minutes = after.map((e) => Math.floor(Date.parse(e.metadata.createdAt) / 60_000));
    expect(new Set(minutes).size, JSON.stringify(after)).toBe(minutes.length);
    await p.api('/v0/jobs/ticker', { method: 'DELETE' });
    // Whatever fired meanwhile ends before the platform stops (afterAll checks for leftovers).
    await waitFor(
      'task containers gone',
      async () => (engineIds(home!).some((e) => e.startsWith('jt-')) ? undefined : true),
      60_000,
    );
  }, 300_000);
});
