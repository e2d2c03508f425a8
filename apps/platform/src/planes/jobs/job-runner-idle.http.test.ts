// The job runner's store polling (job-runner.ts start()): with no active execution it reads the
// store every idleTickMs, not every tick, so an idle platform's event loop (which serves every
// request, the model gateway's included) is not taken by a query ten times a second; a kick still
// runs a pass at once, and with an active execution every tick passes again. Real store (SQLite
// and PostgreSQL); the engine answers EngineUnavailableError as in the other in-process tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../framework/secrets.js';
import { JOB_EXECUTION_KIND } from '../../framework/kinds.js';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';
import { unavailableJobsEngine } from '../../test-support/job-routes.js';
import { until } from '../../test-support/until.js';
import { JobRunner } from './job-runner.js';
import { TaskLogArchive } from './task-logs.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(testDatabases(process.env))('job runner polling on $name', (db) => {
  let t: Platform;
  let home: string;
  let runner: JobRunner | undefined;
  beforeEach(async () => {
    t = await openTestPlatform(db);
    home = mkdtempSync(join(tmpdir(), 'tarmac-runner-idle-'));
  });
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await t.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  /** A runner over the test's store that counts its reads of the active executions. */
  function countingRunner(): { runner: JobRunner; reads: () => number } {
    let reads = 0;
    const resources = t.store.resources;
    const box = new SecretBox(new Uint8Array(32).fill(7));
    const r = new JobRunner({
      resources: {
        getById: (id) => resources.getById(id),
        update: (id, patch, revision) => resources.update(id, patch, revision),
        listByKind: (kind, filter) => {
          if (kind === JOB_EXECUTION_KIND) reads++;
          return resources.listByKind(kind, filter);
        },
      },
      ...unavailableJobsEngine(),
      sealer: box,
      logs: new TaskLogArchive(join(home, 'logs')),
      dataUrl: () => undefined,
      logger: pino({ level: 'silent' }),
      // No task ever starts: an execution stays queued (active) for as long as the test looks.
      capacityPerWorkspace: 0,
      tickMs: 50,
      idleTickMs: 60_000,
    });
    return { runner: r, reads: () => reads };
  }

  it('idle: one read at start and one per kick, none per tick; an active execution brings the ticks back', async () => {
    const c = countingRunner();
    runner = c.runner;
    await runner.start();
    const atStart = c.reads();
    expect(atStart).toBe(1);
    await sleep(600); // twelve ticks
    expect(c.reads()).toBe(atStart);

    runner.kick();
    await until('the kicked pass', async () => (c.reads() === atStart + 1 ? true : undefined), 2000);

    // An execution row (the harness's own runner never starts): the next kick sees it active,
    // and from then on every tick reads again.
    const job = await t.json('/v0/jobs', {
      method: 'POST',
      body: { metadata: { name: 'busy' }, spec: { runtime: { image: 'e2e/task:1', memory: 256 } } },
    });
    expect(job.status).toBe(200);
    expect((await t.json('/v0/jobs/busy/executions', { method: 'POST', body: { tasks: [{}] } })).status).toBe(
      200,
    );
    runner.kick();
    const before = c.reads();
    await sleep(600);
    expect(c.reads() - before).toBeGreaterThanOrEqual(5);
  });
});
