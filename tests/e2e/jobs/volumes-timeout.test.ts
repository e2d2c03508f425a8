// Issue 17, the rest of it on real task containers: job `volumes` (reference §2.4 JobVolume, type
// `ephemeral`) mounted fresh in every task attempt — bounded by their size, read-only when asked,
// never another task's, execution's or workspace's storage (a volume's name selects nothing), and
// gone with the attempt; the execution's own timeout (running tasks stopped with SIGTERM + grace,
// no new ones, `timeout` with a condition saying so); deleting a job cancels its executions and
// removes their containers before the record goes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
const SUBNET = '10.174.0.0/16';
const GATEWAY = '10.174.0.1';

/**
 * What a task finds in its volumes, reported to the receiver's /start: /scratch's entries before it
 * writes there (a fresh ext4 has only lost+found), whether 64 MB fit in the 16 MB volume, and
 * whether the read-only one took a write.
 */
const VOLUME_SCRIPT = String.raw`k="${'$'}{BL_TASK_KEY:-TASK_INDEX}"; eval "i=\$$k"
seen=$(echo $(ls -A /scratch))
echo "mine $BL_EXECUTION_ID $i" > /scratch/mine || exit 5
if dd if=/dev/zero of=/scratch/big bs=1048576 count=64 2>/dev/null; then big=fit; else big=enospc; fi
rm -f /scratch/big
if touch /ro/x 2>/dev/null; then ro=writable; else ro=readonly; fi
q="exec=$BL_EXECUTION_ID&task=$i&attempt=$BL_TASK_ATTEMPT&key=$k"
wget -q -O - --post-data "seen=$seen;big=$big;ro=$ro" "$RECEIVER/start?$q" || exit 90
echo "task $i: seen=$seen big=$big ro=$ro"`;

describe.skipIf(missing !== null)(
  `job volumes, execution timeout, job delete${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    const receiver = new Receiver();
    const drops: Array<() => void> = [];
    const ids = new Set<string>();
    const taskImage = `e2e/jobtask-${process.pid}:1`;
    const volumeImage = `e2e/jobvol-${process.pid}:1`;

    beforeAll(async () => {
      p = await startSandboxPlatform({
        env: {
          TARMAC_BRIDGE: 'tarmacjb0',
          TARMAC_SUBNET: SUBNET,
          // The receiver on the bridge gateway is an internal address: opened for this test only.
          TARMAC_EGRESS_ALLOW_CIDRS: `${GATEWAY}/32`,
          TARMAC_JOBS_WORKSPACE_CAPACITY: '4',
          TARMAC_JOBS_CANCEL_GRACE_SECONDS: '2',
        },
      });
      await receiver.listen(GATEWAY);
      drops.push(await importJobImage(p, taskImage));
      drops.push(await importJobImage(p, volumeImage, ['-c', VOLUME_SCRIPT]));
      const envs = [{ name: 'RECEIVER', value: receiver.url }];
      await createJob(
        p,
        'vols',
        { image: volumeImage, envs, timeout: 120 },
        {
          volumes: [
            { name: 'scratch', mountPath: '/scratch', sizeMb: 16 },
            { name: 'ro', mountPath: '/ro', sizeMb: 8, readOnly: true },
          ],
        },
      );
      await createJob(p, 'deadline', { image: taskImage, envs, timeout: 300 });
      await createJob(p, 'doomed', { image: taskImage, envs, timeout: 300 });
    }, 15 * 60_000);

    afterAll(async () => {
      for (const drop of drops) drop();
      if (p) {
        for (const id of engineIds(p.home)) ids.add(id);
        await p.stop();
        expect(hostLeftovers([...ids])).toEqual([]);
        removeHome(p.home);
      }
      await receiver.close();
    }, 120_000);

    const taskContainers = () => engineIds(p!.home).filter((id) => id.startsWith('jt-'));
    const engineVolumes = () => {
      const dir = join(p!.home, 'volumes');
      return existsSync(dir) ? readdirSync(dir) : [];
    };

    it('mounts fresh, bounded volumes in every attempt; a name reaches nothing else; none outlives it', async () => {
      // A workspace volume named like the job's: the job volume's name must not select it.
      const vol = await p!.api('/v0/volumes', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'scratch' }, spec: { size: 64 } }),
      });
      expect(vol.status, await vol.clone().text()).toBe(200);
      receiver.plan = () => 'ok';
      // One at a time: each task would see the one before it if anything were shared.
      const first = await startExecution(p!, 'vols', { tasks: [{}, {}, {}], parallelism: 1 });
      const second = await startExecution(p!, 'vols', { tasks: [{}] });
      for (const id of taskContainers()) ids.add(id);
      for (const id of [first, second]) {
        const done = await waitExecution(p!, 'vols', id);
        for (const c of taskContainers()) ids.add(c);
        const logs = await (await p!.api(`/v0/jobs/vols/executions/${id}/tasks/task-0/logs`)).text();
        expect(done.status, logs).toBe('succeeded');
      }
      const reports = [...receiver.of(first, 'start'), ...receiver.of(second, 'start')];
      expect(reports).toHaveLength(4);
      for (const r of reports) expect(r.data).toBe('seen=lost+found;big=enospc;ro=readonly');
      // Gone with their attempts: no task volume or its mount left; the workspace volume never
      // allocated (storage is made on a sandbox's first mount, and no task mounted it).
      await waitFor(
        'task volumes removed',
        async () => (engineVolumes().length === 0 ? true : undefined),
        30_000,
      );
      expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(`${p!.home}/volumes/`);
      const record = await json<{ state?: { attachedTo?: string } }>(await p!.api('/v0/volumes/scratch'));
      expect(record.state?.attachedTo ?? '').toBe('');
    }, 300_000);

    it("the execution's timeout stops running tasks (SIGTERM + grace), starts no more, ends `timeout`", async () => {
      receiver.plan = () => 'sleep 600';
      const t0 = Date.now();
      const id = await startExecution(p!, 'deadline', {
        tasks: [{}, {}, {}, {}],
        parallelism: 2,
        timeout: 15,
      });
      await waitFor(
        '2 tasks running',
        async () => (receiver.of(id, 'start').length >= 2 ? true : undefined),
        60_000,
      );
      for (const c of taskContainers()) ids.add(c);
      const done = await waitExecution(p!, 'deadline', id, 90_000);
      const took = Date.now() - t0;
      expect(done.status).toBe('timeout');
      expect(done.stats).toMatchObject({
        total: 4,
        success: 0,
        failure: 2,
        cancelled: 2,
        running: 0,
        retried: 0,
      });
      expectStatsAddUp(done);
      // From creation: 15 s (room for two task starts on a loaded machine) + 2 s grace + a margin.
      expect(took).toBeGreaterThanOrEqual(15_000);
      expect(took).toBeLessThan(60_000);
      for (const t of done.tasks) expect(JSON.stringify(t.conditions)).toContain('ExecutionTimeoutExceeded');
      expect(done.tasks.map((t) => t.status).sort()).toEqual(['cancelled', 'cancelled', 'failed', 'failed']);
      // No task started after the timeout; the running ones never finished their sleep.
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.of(id, 'start')).toHaveLength(2);
      expect(receiver.of(id, 'end')).toEqual([]);
      await waitFor(
        'task containers removed',
        async () => (taskContainers().length === 0 ? true : undefined),
        30_000,
      );
    }, 180_000);

    it('deleting a job cancels its running execution and removes its containers before the record goes', async () => {
      receiver.plan = () => 'sleep 600';
      const id = await startExecution(p!, 'doomed', { tasks: [{}, {}, {}], parallelism: 2 });
      await waitFor(
        '2 tasks running',
        async () => (receiver.of(id, 'start').length >= 2 ? true : undefined),
        60_000,
      );
      for (const c of taskContainers()) ids.add(c);
      expect(taskContainers()).toHaveLength(2);
      const t0 = Date.now();
      const res = await p!.api('/v0/jobs/doomed', { method: 'DELETE' });
      expect(res.status, await res.clone().text()).toBe(200);
      // The answer came after the tasks were stopped (2 s grace at most) and their containers removed.
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(taskContainers()).toEqual([]);
      expect((await p!.api('/v0/jobs/doomed')).status).toBe(404);
      expect((await p!.api(`/v0/jobs/doomed/executions/${id}`)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.of(id, 'start')).toHaveLength(2);
      expect(receiver.of(id, 'end')).toEqual([]);
      // Nothing of it left in the engine (no task volume either).
      expect(engineVolumes()).toEqual([]);
    }, 180_000);
  },
);
