// Issue 14 item 6: sandbox schedules (reference control-plane §1.6, `SandboxScheduleEntry`). An
// `at` entry a few seconds ahead fires once and its execution is listed with the output; a cron
// entry fires at the next minute and wakes a sandbox in STANDBY; a restart on the same home does
// not run a fired instant again; the command runs inside the sandbox (it cannot reach the host's
// files); the schedules a sandbox may have are bounded.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox, Tarmac } from '@tarmac/sdk';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  getSandbox,
  json,
  missingCapability,
  startSandboxPlatform,
  upperFile,
  waitFor,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
/** Lists are {data, meta} from this API version on (reference "Pagination" names sandbox schedules). */
const PAGINATED = '2026-04-28';
const ENV = { TARMAC_BRIDGE: 'tarmacsch0', TARMAC_SUBNET: '10.153.0.0/16', TARMAC_STANDBY_AFTER: '3s' };

interface Execution {
  id: string;
  scheduleId: string;
  statusCode: number;
  status: string;
  processName: string;
  processStatus: string | null;
  exitCode: number | null;
  output: string;
  error: string;
}
interface Entry {
  id: string;
  type: string;
  value: string;
  nextRunAt: string | null;
  lastRunAt: string | null;
  input: { command: string; env?: Record<string, string> };
}

describe.skipIf(missing !== null)(`sandbox schedules${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let home = '';
  const names = ['sched-a', 'sched-cron', 'sched-many'];

  const schedules = (sandbox: string, init: RequestInit = {}, path = '') =>
    p!.api(`/v0/sandboxes/${sandbox}/schedules${path}`, { ...init, version: PAGINATED });
  const executions = async (sandbox: string): Promise<Execution[]> => {
    const res = await p!.api(`/v0/sandboxes/${sandbox}/schedule-executions`, { version: PAGINATED });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await json<{ data: Execution[] }>(res)).data;
  };
  const create = async (sandbox: string, entry: Record<string, unknown>): Promise<Entry> => {
    const res = await schedules(sandbox, { method: 'POST', body: JSON.stringify(entry) });
    expect(res.status, await res.clone().text()).toBe(200);
    return json<Entry>(res);
  };
  const finished = (sandbox: string, scheduleId: string, ms: number) =>
    waitFor(
      `an execution of ${scheduleId} that ended`,
      async () =>
        (await executions(sandbox)).find((e) => e.scheduleId === scheduleId && e.processStatus !== 'running'),
      ms,
    );

  beforeAll(async () => {
    p = await startSandboxPlatform({ env: ENV });
    home = p.home;
  }, 15 * 60_000);

  afterAll(() => cleanUp(p, names), 120_000);

  it('fires an at entry once, inside the sandbox, and lists the execution with its output', async () => {
    const before = new Set(engineIds(home));
    await createSandbox(p!, 'sched-a');
    const engineId = engineIds(home).find((x) => !before.has(x))!;
    const marker = `/tmp/tarmac-sched-escape-${process.pid}`;
    const at = new Date(Date.now() + 4000).toISOString();
    const entry = await create('sched-a', {
      id: 'once',
      type: 'at',
      value: at,
      input: {
        // The attack: write where the host's /tmp would be, and print who and where we are.
        command: `echo fired-on-$(hostname) $GREETING; echo owned > ${marker}; id -u`,
        env: { GREETING: 'hello-secret' },
        name: 'once',
      },
    });
    expect(entry.nextRunAt).toBe(at);
    expect(entry.input.env).toEqual({ GREETING: '********' }); // masked: env may hold secrets
    expect(await executions('sched-a')).toEqual([]);

    const ex = await finished('sched-a', 'once', 30_000);
    expect(ex).toMatchObject({
      statusCode: 200,
      status: 'succeeded',
      processStatus: 'completed',
      exitCode: 0,
    });
    expect(ex.output).toContain('fired-on-sched-a hello-secret');
    expect(ex.processName.startsWith('once-')).toBe(true);
    // It ran inside: the file is in the sandbox's own layer, not on the host.
    expect(existsSync(marker)).toBe(false);
    expect(upperFile(home, engineId, marker.slice(1))).toBe('owned\n');

    // Our SDK reads the same (sandbox.schedules).
    const client = new Tarmac({
      apiUrl: p!.url,
      apiKey: p!.credentials.apiKey,
      workspace: p!.credentials.workspace,
    });
    const sdkSandbox = await Sandbox.get('sched-a', client);
    expect((await sdkSandbox.schedules.executions()).map((e) => e.id)).toEqual([ex.id]);
    expect((await sdkSandbox.schedules.list('at')).map((e) => e.id)).toEqual(['once']);
    const after = await json<Entry>(await schedules('sched-a', {}, '/once'));
    expect(after.nextRunAt).toBeNull();
    expect(after.lastRunAt).not.toBeNull();

    // A restart on the same home does not run the fired instant again (the claim is in the store),
    // and an entry due while the platform was down or after it came back still fires.
    await create('sched-a', {
      id: 'later',
      type: 'at',
      value: new Date(Date.now() + 5000).toISOString(),
      input: { command: 'echo after-restart' },
    });
    await p!.stop();
    p = await startSandboxPlatform({ home, env: ENV });
    const later = await finished('sched-a', 'later', 30_000);
    expect(later.output).toContain('after-restart');
    expect((await executions('sched-a')).filter((e) => e.scheduleId === 'once')).toHaveLength(1);
  }, 120_000);

  it('fires a cron entry at the next minute, waking the sandbox from STANDBY', async () => {
    await createSandbox(p!, 'sched-cron');
    await create('sched-cron', {
      id: 'every-minute',
      type: 'cron',
      value: '* * * * *',
      input: { command: 'date -u +%M; echo cron-ran', keepAlive: false },
    });
    await waitSandbox(p!, 'sched-cron', (s) => s.state === 'STANDBY', 'STANDBY', 30_000);
    // The minute may have turned while the sandbox was still RUNNING (it idles 3 s first): only an
    // execution that was not there when STANDBY was seen proves the wake.
    const before = new Set((await executions('sched-cron')).map((e) => e.id));
    const ex = await waitFor(
      'an execution of every-minute, fired in STANDBY, that ended',
      async () =>
        (await executions('sched-cron')).find(
          (e) => e.scheduleId === 'every-minute' && !before.has(e.id) && e.processStatus !== 'running',
        ),
      80_000,
    );
    expect(ex).toMatchObject({ statusCode: 200, processStatus: 'completed', exitCode: 0 });
    expect(ex.output).toContain('cron-ran');
    const s = await getSandbox(p!, 'sched-cron');
    expect(s.events.map((e) => e.type)).toContain('Resume');
    // listed by type, paginated as the reference says ({data, meta}, limit at most 100)
    const list = await json<{ data: Entry[]; meta: { total: number } }>(
      await schedules('sched-cron', {}, '?type=cron&limit=100'),
    );
    expect(list.data.map((e) => e.id)).toEqual(['every-minute']);
    expect((await schedules('sched-cron', {}, '?limit=101')).status).toBe(400);
  }, 150_000);

  it('refuses bad entries and more schedules than a sandbox may have', async () => {
    await createSandbox(p!, 'sched-many');
    const bad = async (entry: Record<string, unknown>, field: string) => {
      const res = await schedules('sched-many', { method: 'POST', body: JSON.stringify(entry) });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(field);
    };
    await bad({ type: 'cron', value: '* * * * * *', input: { command: 'true' } }, 'value');
    await bad({ type: 'at', value: 'tomorrow', input: { command: 'true' } }, 'value');
    await bad({ type: 'sleep', value: '5 minutes', input: { command: 'true' } }, 'value');
    await bad({ type: 'cron', value: '0 0 * * *', input: { command: '' } }, 'input.command');
    // The sleep entry becomes an at entry.
    const slept = await create('sched-many', { type: 'sleep', value: '1h', input: { command: 'true' } });
    expect(slept.type).toBe('at');
    let made = 1;
    for (; made < 50; made++)
      await create('sched-many', { type: 'cron', value: '0 0 1 1 *', input: { command: 'true' } });
    const refused = await schedules('sched-many', {
      method: 'POST',
      body: JSON.stringify({ type: 'cron', value: '0 0 1 1 *', input: { command: 'true' } }),
    });
    expect(refused.status, await refused.clone().text()).toBe(409);
    // Delete answers the entry; the list shrinks.
    const del = await schedules('sched-many', { method: 'DELETE' }, `/${slept.id}`);
    expect(del.status).toBe(200);
    expect((await json<Entry>(del)).id).toBe(slept.id);
    expect((await schedules('sched-many', {}, `/${slept.id}`)).status).toBe(404);
  }, 120_000);
});
