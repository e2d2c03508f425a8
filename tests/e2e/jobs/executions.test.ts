// Issue 17 "What it must show": executions of a job's task array on real task containers (the
// sandbox engine, egress proxy and image store). The `batch` job is built from examples/batch-job
// by `tarmac deploy` (builds plane, buildah); the others run a small imported busybox image.
// Parallelism observed from inside, retry with
// stats.retried, timeout kill, idempotent `id`, allowQueue:false 429 creating nothing, cancel
// mid-run, BL_EXECUTION_DATA_URL and TASK_INDEX/BL_TASK_KEY inside the task, task logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv, runCli } from '../cli/cli-runner.js';
import type { RunningPlatform } from '../support/platform.js';
import {
  engineIds,
  hostLeftovers,
  json,
  removeHome,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import {
  createJob,
  deployBatchJob,
  expectStatsAddUp,
  getExecution,
  importJobImage,
  missingJobCapability,
  Receiver,
  startExecution,
  waitExecution,
} from './support.js';

const missing = missingJobCapability();
const SUBNET = '10.165.0.0/16';
const GATEWAY = '10.165.0.1';

describe.skipIf(missing !== null)(`job executions${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const receiver = new Receiver();
  let dropImage: (() => void) | undefined;
  let dropBuilt: (() => void) | undefined;
  const image = `e2e/jobtask-${process.pid}:1`;
  const ids = new Set<string>();

  beforeAll(async () => {
    p = await startSandboxPlatform({
      env: {
        TARMAC_BRIDGE: 'tjobs0',
        TARMAC_SUBNET: SUBNET,
        // The receiver on the bridge gateway is an internal address: opened for this test only.
        TARMAC_EGRESS_ALLOW_CIDRS: `${GATEWAY}/32`,
        TARMAC_JOBS_WORKSPACE_CAPACITY: '4',
        TARMAC_JOBS_CANCEL_GRACE_SECONDS: '2',
        TARMAC_METERING_INTERVAL_SECONDS: '1',
      },
    });
    await receiver.listen(GATEWAY);
    dropImage = await importJobImage(p, image);
    // Built from the example folder: 128 MB, Node task script reporting to REPORT_URL.
    dropBuilt = await deployBatchJob(p, 'batch', { REPORT_URL: receiver.url });
    const envs = [{ name: 'RECEIVER', value: receiver.url }];
    await createJob(p, 'flaky', {
      image,
      envs: [...envs, { name: 'BL_TASK_KEY', value: 'MY_INDEX' }],
      maxRetries: 2,
      timeout: 120,
    });
    await createJob(p, 'slow', { image, envs, maxRetries: 2, timeout: 3 });
  }, 15 * 60_000);

  afterAll(async () => {
    dropImage?.();
    dropBuilt?.();
    if (p) {
      for (const id of engineIds(p.home)) ids.add(id);
      await p.stop();
      expect(hostLeftovers([...ids])).toEqual([]);
      removeHome(p.home);
    }
    await receiver.close();
  }, 120_000);

  const track = () => {
    for (const id of engineIds(p!.home)) ids.add(id);
  };

  it('runs 20 tasks never more than 4 at once, each with its data and index; 429 and idempotency meanwhile', async () => {
    receiver.plan = () => 'sleep 1';
    const tasks = Array.from({ length: 20 }, (_, i) => ({ n: i, word: `w${i}` }));
    const id = await startExecution(p!, 'batch', { tasks, parallelism: 4, id: 'par-run' });
    expect(id).toBe('par-run');
    // The same idempotency key again: the same execution, nothing new.
    expect(await startExecution(p!, 'batch', { tasks, parallelism: 4, id: 'par-run' })).toBe('par-run');
    // Capacity 4 is taken by this execution: allowQueue:false is 429 and creates nothing.
    await waitFor(
      'tasks running',
      async () => (receiver.of(id, 'start').length >= 1 ? true : undefined),
      60_000,
    );
    const refused = await p!.api('/v0/jobs/batch/executions', {
      method: 'POST',
      body: JSON.stringify({ tasks: [{}], allowQueue: false, id: 'refused' }),
    });
    expect(refused.status, await refused.clone().text()).toBe(429);
    expect((await p!.api('/v0/jobs/batch/executions/refused')).status).toBe(404);
    const CURSOR_API = { version: '2026-04-28' };
    const list = await json<{ data: { metadata: { id: string } }[] }>(
      await p!.api('/v0/jobs/batch/executions', CURSOR_API),
    );
    expect(list.data.map((e) => e.metadata.id)).toEqual(['par-run']);
    // Before 2026-04-28 the same list is a bare array.
    const legacy = await json<{ metadata: { id: string } }[]>(await p!.api('/v0/jobs/batch/executions'));
    expect(legacy.map((e) => e.metadata.id)).toEqual(['par-run']);
    // Memory above the job's is 400.
    const tooBig = await p!.api('/v0/jobs/batch/executions', {
      method: 'POST',
      body: JSON.stringify({ tasks: [{}], memory: 256 }),
    });
    expect(tooBig.status).toBe(400);
    expect(await tooBig.text()).toContain('memory');
    track();
    const done = await waitExecution(p!, 'batch', id, 180_000);
    track();
    const failed = done.tasks.filter((t) => t.status !== 'succeeded');
    const why = await Promise.all(
      failed.map(async (t) =>
        (await p!.api(`/v0/jobs/batch/executions/${id}/tasks/${t.metadata.name}/logs`)).text(),
      ),
    );
    expect(done.status, JSON.stringify({ failed, why })).toBe('succeeded');
    expect(done.stats).toMatchObject({ total: 20, success: 20, failure: 0, running: 0, retried: 0 });
    expectStatsAddUp(done);
    const starts = receiver.of(id, 'start');
    expect(starts.map((e) => e.task).sort((a, b) => a - b)).toEqual(tasks.map((_, i) => i));
    expect(receiver.maxConcurrent(id)).toBeLessThanOrEqual(4);
    expect(receiver.maxConcurrent(id)).toBeGreaterThanOrEqual(2);
    for (const s of starts) {
      expect(s.key).toBe('TASK_INDEX');
      expect(JSON.parse(s.data ?? '{}')).toEqual({ tasks });
    }
    // Task list and logs.
    const taskList = await json<{ data: { metadata: { name: string }; status: string }[] }>(
      await p!.api(`/v0/jobs/batch/executions/${id}/tasks?limit=5`, CURSOR_API),
    );
    expect(taskList.data.map((t) => t.metadata.name)).toEqual([
      'task-0',
      'task-1',
      'task-2',
      'task-3',
      'task-4',
    ]);
    const logs = await json<{ text: string; done: boolean }>(
      await p!.api(`/v0/jobs/batch/executions/${id}/tasks/task-7/logs`),
    );
    expect(logs.text).toContain('task 7 done');
    expect(logs.done).toBe(true);

    // Metering: 20 task containers of 128 MB for at least the 1 s each slept, and the image's
    // bytes while they existed, under the job's name (billing metrics API).
    await new Promise((r) => setTimeout(r, 2500)); // two meter passes
    const hour = 3_600_000;
    const params = new URLSearchParams({
      startTime: new Date(Math.floor(Date.now() / hour) * hour - hour).toISOString(),
      endTime: new Date(Math.floor(Date.now() / hour) * hour + hour).toISOString(),
      groupBy: 'resource_name,billing_dimension',
    });
    const metrics = await json<{
      data: { resourceName?: string; billingDimension?: string; summary: { usage?: number } }[];
    }>(await p!.api(`/v0/accounts/${p!.credentials.accountId}/metrics?${params.toString()}`));
    const usage = (dim: string) =>
      metrics.data.find((e) => e.resourceName === 'batch' && e.billingDimension === dim)?.summary.usage;
    const wall = (Date.parse(done.metadata.completedAt!) - Date.parse(done.metadata.createdAt)) / 1000;
    expect(usage('job_compute_runtime_gbs'), JSON.stringify(metrics.data)).toBeGreaterThanOrEqual(
      (20 * 1 * 128) / 1024 - 0.5,
    );
    expect(usage('job_compute_runtime_gbs')).toBeLessThanOrEqual(((4 * 128) / 1024) * (wall + 2));
    expect(usage('job_image_storage_gbs'), JSON.stringify(metrics.data)).toBeGreaterThan(0);
  }, 300_000);

  it('retries a failing task with backoff (stats.retried), the index under BL_TASK_KEY', async () => {
    receiver.plan = (e) => (e.attempt === 1 ? 'fail' : 'ok');
    const id = await startExecution(p!, 'flaky', { tasks: [{ a: 1 }] });
    track();
    const done = await waitExecution(p!, 'flaky', id);
    track();
    expect(done.status).toBe('succeeded');
    expect(done.stats.retried).toBe(1);
    expect(done.stats.success).toBe(1);
    const starts = receiver.of(id, 'start');
    expect(starts.map((e) => e.attempt)).toEqual([1, 2]);
    expect(starts[0]!.key).toBe('MY_INDEX');
    expect(starts[1]!.at - starts[0]!.at).toBeGreaterThanOrEqual(900); // the 1 s backoff

    // The attack: another execution's data with this execution's capability. The data server on
    // the bridge gateway answers only the URL it handed out (row id + HMAC of it).
    const mine = new URL(starts[0]!.dataUrl!);
    const other = new URL(receiver.of('par-run', 'start')[0]!.dataUrl!);
    expect((await fetch(mine)).status).toBe(200);
    const [, , otherRow] = other.pathname.split('/');
    const [, , myRow, myToken] = mine.pathname.split('/');
    expect(otherRow).not.toBe(myRow);
    const stolen = await fetch(new URL(`/executions/${otherRow}/${myToken}`, mine));
    expect(stolen.status).toBe(404);
    expect(await stolen.text()).not.toContain('w19');
  }, 180_000);

  it('kills a task past its timeout and reports it', async () => {
    receiver.plan = () => 'sleep 600';
    const t0 = Date.now();
    const id = await startExecution(p!, 'slow', { tasks: [{}] });
    track();
    const done = await waitExecution(p!, 'slow', id);
    track();
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(done.status).toBe('timeout');
    expect(done.tasks[0]!.status).toBe('failed');
    expect(JSON.stringify(done.tasks[0]!.conditions)).toContain('TimeoutExceeded');
    expect(receiver.of(id, 'end')).toEqual([]);
    // A timeout is not retried.
    expect(receiver.of(id, 'start')).toHaveLength(1);
  }, 180_000);

  it('tarmac run job follows an execution to its end (exit code), tarmac logs job prints task output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tarmac-jobcli-'));
    try {
      const file = join(dir, 'tasks.json');
      writeFileSync(file, JSON.stringify({ tasks: [{ x: 1 }, { x: 2 }] }));
      const env = cliEnv({
        TARMAC_API_URL: p!.url,
        TARMAC_API_KEY: p!.credentials.apiKey,
        TARMAC_WORKSPACE: p!.credentials.workspace,
        TARMAC_HOME: dir,
      });
      receiver.plan = () => 'ok';
      const ok = await runCli(['run', 'job', 'batch', '--file', file, '--parallelism', '2'], {
        env,
        timeoutMs: 120_000,
      });
      expect(ok.code, ok.stderr).toBe(0);
      const id = ok.stdout.trim();
      expect(ok.stderr).toContain('succeeded: 2/2 succeeded');
      const logs = await runCli(['logs', 'job', 'batch', id, 'task-1'], { env });
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toContain('task 1 done');
      // The base-URL trigger (spec "Inference endpoints": {base_url}/{ws}/jobs/{name}/executions).
      const trigger = await fetch(`${p!.url}/${p!.credentials.workspace}/jobs/batch/executions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p!.credentials.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tasks: [{ via: 'url' }] }),
      });
      const triggered = await json<{ id: string; jobId: string }>(trigger);
      expect(trigger.status, JSON.stringify(triggered)).toBe(200);
      expect((await waitExecution(p!, 'batch', triggered.id)).status).toBe('succeeded');
      const all = await runCli(['logs', 'job', 'batch', id, '-f'], { env, timeoutMs: 60_000 });
      expect(all.stdout).toContain('[task-0] task 0 done');
      expect(all.stdout).toContain('[task-1] task 1 done');
      receiver.plan = () => 'fail';
      const failed = await runCli(['run', 'job', 'batch', '--file', file], { env, timeoutMs: 120_000 });
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stderr).toContain('failed: 0/2 succeeded, 2 failed');
      track();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('cancels mid-run: cancelling, then cancelled; running tasks stopped, no new ones', async () => {
    receiver.plan = () => 'sleep 600';
    const id = await startExecution(p!, 'batch', { tasks: [{}, {}, {}, {}, {}], parallelism: 2 });
    await waitFor(
      '2 tasks running',
      async () => (receiver.of(id, 'start').length >= 2 ? true : undefined),
      60_000,
    );
    track();
    const res = await p!.api(`/v0/jobs/batch/executions/${id}`, { method: 'DELETE' });
    const body = await json<{ status: string }>(res);
    expect(res.status).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(body.status);
    const done = await waitExecution(p!, 'batch', id, 60_000);
    expect(done.status).toBe('cancelled');
    expect(done.stats.cancelled).toBe(5);
    expectStatsAddUp(done);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.of(id, 'start')).toHaveLength(2);
    expect(receiver.of(id, 'end')).toEqual([]);
    const after = await getExecution(p!, 'batch', id);
    expect(after.status).toBe('cancelled');
  }, 180_000);
});
