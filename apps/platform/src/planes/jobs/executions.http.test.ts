// Issue 17 over HTTP (in-process, SQLite and PostgreSQL): creating executions (idempotent `id`,
// memory bound, allowQueue:false 429 creating nothing, the base-URL trigger), the task list and
// cancel, as stored. The runner is not started here (no engine): tasks stay pending, which is what
// makes capacity observable. Running tasks for real: tests/e2e/jobs.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };

describe.each(testDatabases(process.env))('job executions on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
    const job = await t.json('/v0/jobs', {
      method: 'POST',
      body: {
        metadata: { name: 'nightly' },
        spec: {
          runtime: { image: 'e2e/task:1', memory: 512, maxConcurrentTasks: 3, maxRetries: 1, timeout: 60 },
        },
      },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
  });
  afterEach(async () => t.dispose());

  const create = (body: unknown, path = '/v0/jobs/nightly/executions') =>
    t.json<any>(path, { method: 'POST', body });

  it('creates an execution once per idempotency id, with the reference shapes', async () => {
    const first = await create({ tasks: [{ a: 1 }, { a: 2 }], id: 'run-1', env: { TOKEN: 'secret-value' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      id: 'run-1',
      executionId: 'run-1',
      jobId: 'nightly',
      workspaceId: t.workspace,
      tasks: [{ a: 1 }, { a: 2 }],
    });
    const again = await create({ tasks: [{ other: true }], id: 'run-1' });
    expect(again.body.tasks).toEqual([{ a: 1 }, { a: 2 }]);
    const list = await t.json<any>('/v0/jobs/nightly/executions', { version: '2026-04-28' });
    expect(list.body.data).toHaveLength(1);
    const exec = await t.json<any>('/v0/jobs/nightly/executions/run-1');
    expect(exec.body.status).toBe('queued');
    // Parallelism from the job's legacy maxConcurrentTasks; env values masked.
    expect(exec.body.spec).toMatchObject({ parallelism: 3, envOverride: { TOKEN: '***' } });
    expect(JSON.stringify(exec.body)).not.toContain('secret-value');
    expect(exec.body.stats).toEqual({
      total: 2,
      success: 0,
      failure: 0,
      running: 0,
      retried: 0,
      cancelled: 0,
    });
    expect(exec.body.tasks[0]).toMatchObject({
      metadata: { name: 'task-0' },
      status: 'pending',
      spec: { maxRetries: 1 },
    });
    // The secret is not stored in clear either.
    const rows = await t.store.resources.listByKind('job-execution');
    expect(JSON.stringify(rows)).not.toContain('secret-value');
  });

  it('refuses memory above the job and unknown jobs', async () => {
    const big = await create({ tasks: [{}], memory: 1024 });
    expect(big.status).toBe(400);
    expect(big.body.message).toContain('memory');
    expect((await create({ tasks: [{}] }, '/v0/jobs/missing/executions')).status).toBe(404);
  });

  it('answers 429 and creates nothing when allowQueue is false and the workspace is full', async () => {
    // Capacity 4 (test plane): four tasks waiting fill it.
    expect((await create({ tasks: [{}, {}, {}, {}], id: 'fill' })).status).toBe(200);
    const refused = await create({ tasks: [{}], id: 'no-queue', allowQueue: false });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
    expect((await t.json('/v0/jobs/nightly/executions/no-queue')).status).toBe(404);
    // Queueing allowed: created, queued.
    expect((await create({ tasks: [{}], id: 'queued-ok' })).status).toBe(200);
  });

  it('starts executions on the base URL too, and lists tasks with a cursor', async () => {
    const res = await create(
      { tasks: Array.from({ length: 5 }, (_, i) => ({ i })) },
      `/${t.workspace}/jobs/nightly/executions`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page1 = await t.json<any>(`/v0/jobs/nightly/executions/${res.body.id}/tasks?limit=2`, {
      version: '2026-04-28',
    });
    expect(page1.body.data.map((x: any) => x.metadata.name)).toEqual(['task-0', 'task-1']);
    expect(page1.body.meta.hasMore).toBe(true);
    const page2 = await t.json<any>(
      `/v0/jobs/nightly/executions/${res.body.id}/tasks?limit=2&cursor=${encodeURIComponent(page1.body.meta.nextCursor)}`,
      { version: '2026-04-28' },
    );
    expect(page2.body.data.map((x: any) => x.metadata.name)).toEqual(['task-2', 'task-3']);
  });

  it('cancels: the execution goes cancelling', async () => {
    await create({ tasks: [{}], id: 'to-cancel' });
    const del = await t.json<any>('/v0/jobs/nightly/executions/to-cancel', { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('cancelling');
    expect((await t.json('/v0/jobs/nightly/executions/nope', { method: 'DELETE' })).status).toBe(404);
  });
});
