import type { ScheduleExecution } from '@tarmac/contract';
import { testDatabases } from '@tarmac/store/test-support';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../framework/secrets.js';
import { SANDBOX_SCHEDULE_EXECUTION_KIND, SANDBOX_SCHEDULE_KIND } from '../../../framework/kinds.js';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';
import { until } from '../../../test-support/until.js';
import { LiveSandboxes } from '../controllers/live-sandboxes.js';
import { ScheduleRunner } from './schedule-runner.js';
import { scheduleSecretContext, sealEnv, type ScheduleSpec } from './schedule-record.js';

/**
 * The runner over the real store of each dialect, with a stand-in for sandboxd on loopback (the
 * real one is exercised by tests/e2e/sandboxes/schedules.test.ts). Two runners on one store are
 * two platform processes, or one before and after a restart: an instant fires once.
 */
describe.each(testDatabases(process.env))('ScheduleRunner ($name)', (database) => {
  let p: TestPlatform;
  let server: Server;
  let posts: Array<Record<string, unknown>>;
  const runners: ScheduleRunner[] = [];
  const live = new LiveSandboxes();

  beforeEach(async () => {
    p = await openTestPlatform(database);
    posts = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.headers['x-tarmac-sandbox-token'] !== 'tok-rec-1') return res.writeHead(401).end('{}');
        if (req.method === 'POST') {
          const parsed = JSON.parse(body) as Record<string, unknown>;
          posts.push(parsed);
          if (parsed.workingDir === '/nowhere') return res.writeHead(400).end('{"error":"no such dir"}');
          return res.end('{}');
        }
        if (req.url?.endsWith('/logs')) return res.end(JSON.stringify({ logs: 'x'.repeat(20_000) + 'END' }));
        return res.end(JSON.stringify({ status: 'completed', exitCode: 3 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    live.add({
      id: 'rec-1',
      workspace: p.workspace,
      name: 'box',
      engineId: 'e1',
      ip: '127.0.0.1',
      state: 'STANDBY',
      lastUsedMs: 0,
      bootedMs: 0,
      lastUsedWrittenMs: 0,
      inflight: 0,
      freezing: false,
    });
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) r.stop();
    await new Promise((r) => server.close(r));
    await p.dispose();
  });

  const runner = (touched: string[] = [], maxFollowed?: number) => {
    const r = new ScheduleRunner({
      resources: p.store.resources,
      live,
      touch: (entry) => {
        touched.push(entry.name);
        entry.state = 'RUNNING';
      },
      sandboxdHeaders: (id) => ({ 'x-tarmac-sandbox-token': `tok-${id}` }),
      secrets: new SecretBox(p.secretKey),
      changes: p.feed,
      logger: pino({ level: 'silent' }),
      ready: Promise.resolve(),
      sandboxdPort: (server.address() as AddressInfo).port,
      tickMs: 20,
      pollMs: 20,
      ...(maxFollowed !== undefined ? { maxFollowed } : {}),
    });
    runners.push(r);
    return r;
  };

  const schedule = async (
    spec: Omit<ScheduleSpec, 'input'>,
    env?: Record<string, string>,
    input: Partial<ScheduleSpec['input']> = {},
  ) => {
    const at = new Date().toISOString();
    const box = new SecretBox(p.secretKey);
    const sealed = sealEnv(box, env, scheduleSecretContext(p.workspace, 'box', 'job'));
    await p.store.resources.create<ScheduleSpec>({
      id: 'sched-1',
      workspace: p.workspace,
      kind: SANDBOX_SCHEDULE_KIND,
      parent: 'box',
      name: 'job',
      displayName: null,
      externalId: null,
      labels: {},
      spec: { ...spec, input: { command: 'echo hi', ...input, ...(sealed ? { env: sealed } : {}) } },
      status: spec.type,
      state: null,
      system: { armedAt: at, executions: [] },
      events: [],
      createdAt: at,
      updatedAt: at,
      createdBy: 't',
      updatedBy: 't',
      terminatedAt: null,
    });
  };
  const executions = () => p.store.resources.listByKind<ScheduleExecution>(SANDBOX_SCHEDULE_EXECUTION_KIND);

  it('fires a due at entry once across two runners, wakes the sandbox, and records the outcome', async () => {
    await schedule(
      { type: 'at', value: new Date(Date.now() - 1000).toISOString(), maxExecutions: 5 },
      {
        TOKEN: 's3cret',
      },
    );
    const touched: string[] = [];
    runner(touched).start();
    runner(touched).start();
    await until('the execution completed', async () =>
      (await executions())[0]?.spec.processStatus === 'completed' ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 200)); // more ticks of both: nothing fires again
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ command: 'echo hi', env: { TOKEN: 's3cret' }, keepAlive: true });
    expect(touched).toEqual(['box']);
    const [ex] = await executions();
    expect(ex!.spec.exitCode).toBe(3);
    expect(ex!.spec.output).toHaveLength(16 * 1024); // bounded: the tail is kept
    expect(ex!.spec.output.endsWith('END')).toBe(true);
    // Stored sealed: the database alone does not reveal the env value.
    const stored = await p.store.resources.getById<ScheduleSpec>('sched-1');
    expect(JSON.stringify(stored!.spec)).not.toContain('s3cret');

    // "Restart": a fresh runner on the same store does not run the claimed instant again.
    for (const r of runners.splice(0)) r.stop();
    runner().start();
    await new Promise((r) => setTimeout(r, 200));
    expect(posts).toHaveLength(1);
  }, 30_000); // real timers and a real database: slow under a loaded CI machine

  it('keeps at most maxExecutions records of a schedule', async () => {
    await schedule({ type: 'cron', value: '* * * * *', maxExecutions: 2 });
    // Every claimed minute from the armed time: move lastRunAt back so each tick finds one due.
    const r = runner();
    r.start();
    for (let i = 0; i < 4; i++) {
      const row = await p.store.resources.getById<ScheduleSpec>('sched-1');
      const armedAt = new Date(Date.now() - (i + 2) * 3_600_000).toISOString();
      await p.store.resources.update('sched-1', {
        system: { ...row!.system, armedAt, lastRunAt: undefined },
      });
      p.feed.publish({ workspace: p.workspace, kind: SANDBOX_SCHEDULE_KIND, name: 'box/job' });
      await until(`submit ${i + 1}`, async () => (posts.length === i + 1 ? true : undefined));
    }
    await until('two records kept', async () => ((await executions()).length === 2 ? true : undefined));
    const row = await p.store.resources.getById('sched-1');
    expect((row!.system as { executions: string[] }).executions).toHaveLength(2);
  }, 30_000);

  it('records the submit but follows no more processes than its bound', async () => {
    await schedule({ type: 'at', value: new Date(Date.now() - 1000).toISOString(), maxExecutions: 5 });
    runner([], 0).start();
    await until('the execution recorded', async () =>
      (await executions())[0]?.spec.processStatus === 'unknown' ? true : undefined,
    );
    expect(posts).toHaveLength(1);
    expect((await executions())[0]!.spec.exitCode).toBeNull();
  }, 30_000);

  it('records a refused submit and an unreachable sandbox as failed executions', async () => {
    await schedule(
      { type: 'at', value: new Date(Date.now() - 1000).toISOString(), maxExecutions: 5 },
      undefined,
      {
        workingDir: '/nowhere',
      },
    );
    runner().start();
    const refused = await until('the refused run', async () => (await executions())[0]);
    expect(refused.spec).toMatchObject({ status: 'failed', statusCode: 400, processStatus: null });
    expect(refused.spec.error).toContain('no such dir');

    live.remove('rec-1'); // the sandbox is gone (deleted, failed, not started yet)
    const row = await p.store.resources.getById<ScheduleSpec>('sched-1');
    await p.store.resources.update('sched-1', {
      spec: { ...row!.spec, value: new Date(Date.now() - 500).toISOString() },
    });
    p.feed.publish({ workspace: p.workspace, kind: SANDBOX_SCHEDULE_KIND, name: 'box/job' });
    const missed = await until('the unreachable run', async () => {
      const all = await executions();
      return all.length === 2 ? all.find((e) => e.id !== refused.id) : undefined;
    });
    expect(missed.spec).toMatchObject({ status: 'failed', statusCode: 0 });
    expect(missed.spec.error).toContain('not running');
  }, 30_000);

  it('after a restart, finishes the records of processes that were still running', async () => {
    const at = new Date().toISOString();
    await p.store.resources.create<ScheduleExecution>({
      id: 'ex-row',
      workspace: p.workspace,
      kind: SANDBOX_SCHEDULE_EXECUTION_KIND,
      parent: 'box',
      name: 'exec-1',
      displayName: null,
      externalId: null,
      labels: {},
      spec: {
        id: 'exec-1',
        scheduleId: 'job',
        sandbox: 'box',
        executedAt: at,
        createdAt: at,
        processName: 'job-1',
        status: 'succeeded',
        statusCode: 200,
        error: '',
        timeout: 600,
        processStatus: 'running',
        exitCode: null,
        completedAt: null,
        output: '',
      },
      status: 'running',
      state: null,
      system: {},
      events: [],
      createdAt: at,
      updatedAt: at,
      createdBy: 'scheduler',
      updatedBy: 'scheduler',
      terminatedAt: null,
    });
    runner().start();
    await until('the record finished', async () =>
      (await executions())[0]?.spec.processStatus === 'completed' ? true : undefined,
    );
    expect((await executions())[0]!.spec.exitCode).toBe(3);
    expect(posts).toHaveLength(0); // followed, not run again
  }, 30_000);
});
