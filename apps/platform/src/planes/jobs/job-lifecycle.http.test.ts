// Issue 17 over HTTP (in-process, SQLite and PostgreSQL; the runner is not started, so tasks stay
// pending): deleting a job cancels its executions before the record goes; job `volumes` refused
// when a name or mount path tries a path trick, and fixed into the execution's plan; the
// execution's own `timeout` (JobExecution spec.timeout). Tasks on the real engine: tests/e2e/jobs.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };

describe.each(testDatabases(process.env))('job lifecycle on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
  });
  afterEach(async () => t.dispose());

  const createJob = (name: string, spec: Record<string, unknown> = {}) =>
    t.json<any>('/v0/jobs', {
      method: 'POST',
      body: { metadata: { name }, spec: { runtime: { image: 'e2e/task:1', memory: 256 }, ...spec } },
    });
  const start = (job: string, body: Record<string, unknown>) =>
    t.json<any>(`/v0/jobs/${job}/executions`, { method: 'POST', body });

  it('deleting a job cancels its active executions, then removes them: a job made again under its name starts empty', async () => {
    expect((await createJob('doomed')).status).toBe(200);
    expect((await createJob('other')).status).toBe(200);
    for (const id of ['a', 'b']) expect((await start('doomed', { tasks: [{}, {}], id })).status).toBe(200);
    expect((await start('other', { tasks: [{}], id: 'keep' })).status).toBe(200);
    // One already over (cancelled by DELETE of the execution), one other job's.
    expect((await t.json('/v0/jobs/doomed/executions/b', { method: 'DELETE' })).status).toBe(200);
    const del = await t.json<any>('/v0/jobs/doomed', { method: 'DELETE' });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect((await t.json('/v0/jobs/doomed')).status).toBe(404);
    const rows = await t.store.resources.listByKind('job-execution', { includeTerminated: true });
    expect(rows.map((r) => `${r.parent}/${r.name}`)).toEqual(['other/keep']);
    // Another job's execution is untouched.
    expect(rows[0]?.status).toBe('queued');
    // The same name again: no history, and the old idempotency id makes a new execution.
    expect((await createJob('doomed')).status).toBe(200);
    const list = await t.json<any>('/v0/jobs/doomed/executions');
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body) ? list.body : list.body.data).toEqual([]);
    const again = await start('doomed', { tasks: [{}], id: 'a' });
    expect(again.status).toBe(200);
    const fresh = await t.json<any>('/v0/jobs/doomed/executions/a');
    expect(fresh.body.status).toBe('queued');
    expect(fresh.body.spec.tasks ?? fresh.body.tasks).toHaveLength(1);
  });

  it('a job being deleted takes no new execution (DELETING), and DELETE of a job with none is quick', async () => {
    expect((await createJob('quiet')).status).toBe(200);
    const del = await t.json<any>('/v0/jobs/quiet', { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('DELETING');
    expect((await start('quiet', { tasks: [{}] })).status).toBe(404);
  });

  it.each([
    [{ name: '../other-ws-volume', mountPath: '/data' }, 'spec.volumes.0.name'],
    [{ name: 'a/b', mountPath: '/data' }, 'spec.volumes.0.name'],
    [{ name: 'Data', mountPath: '/data' }, 'spec.volumes.0.name'],
    [{ name: 'v', mountPath: 'data' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/data/../../etc' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/data/./x' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/data//x' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/data/' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/proc/self' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/sys' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/dev/shm' }, 'spec.volumes.0.mountPath'],
    [{ name: 'v', mountPath: '/data', type: 'persistent' }, 'spec.volumes.0.type'],
  ])('refuses the job volume %j (400 naming %s)', async (volume, field) => {
    const res = await createJob('bad-volume', { volumes: [volume] });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toContain(field);
  });

  it('refuses two volumes on one mount path or with one name', async () => {
    const twice = await createJob('twice', {
      volumes: [
        { name: 'a', mountPath: '/data' },
        { name: 'b', mountPath: '/data' },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toContain('spec.volumes.1.mountPath');
    const same = await createJob('same', {
      volumes: [
        { name: 'a', mountPath: '/x' },
        { name: 'a', mountPath: '/y' },
      ],
    });
    expect(same.status).toBe(400);
    expect(same.body.message).toContain('spec.volumes.1.name');
  });

  it("fixes the job's volumes and the execution timeout into the execution", async () => {
    const job = await createJob('with-volumes', {
      volumes: [
        { name: 'scratch', mountPath: '/scratch', sizeMb: 64 },
        { name: 'ref', mountPath: '/ref', readOnly: true },
        { name: 'root', mountPath: '/', sizeMb: 2048 },
      ],
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect((await start('with-volumes', { tasks: [{}], id: 'e1', timeout: 90 })).status).toBe(200);
    expect((await start('with-volumes', { tasks: [{}], id: 'e2' })).status).toBe(200);
    const e1 = await t.json<any>('/v0/jobs/with-volumes/executions/e1');
    expect(e1.body.spec.timeout).toBe(90);
    // Without one: the platform's default (3600 in the test plane).
    expect((await t.json<any>('/v0/jobs/with-volumes/executions/e2')).body.spec.timeout).toBe(3600);
    const row = (await t.store.resources.listByKind('job-execution')).find((r) => r.name === 'e1');
    expect((row?.system as any).plan).toMatchObject({
      executionTimeoutSeconds: 90,
      volumes: [
        { mountPath: '/scratch', sizeMB: 64, readOnly: false },
        { mountPath: '/ref', sizeMB: 1024, readOnly: true },
      ],
      rootDiskMB: 2048,
    });
    for (const timeout of [0, 1.5, 604_801]) {
      const bad = await start('with-volumes', { tasks: [{}], timeout });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('timeout');
    }
  });
});
