import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';

const entry = (extra: Record<string, unknown> = {}) => ({
  type: 'cron',
  value: '0 8 * * 1-5',
  input: { command: 'echo hi', env: { TOKEN: 'abc' } },
  ...extra,
});

describe.each(testDatabases(process.env))('sandbox schedules over HTTP ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
    expect((await p.call('POST', '/v0/sandboxes', { metadata: { name: 'box' }, spec: {} })).status).toBe(200);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('creates, reads, updates and deletes an entry; env is masked; sleep becomes at', async () => {
    const made = await p.call('POST', '/v0/sandboxes/box/schedules', entry({ id: 'weekday' }));
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({
      id: 'weekday',
      type: 'cron',
      sandbox: 'box',
      maxExecutions: 100,
      lastRunAt: null,
      input: { command: 'echo hi', env: { TOKEN: '********' } },
    });
    expect(new Date(made.body.nextRunAt).getUTCHours()).toBe(8);
    expect((await p.call('POST', '/v0/sandboxes/box/schedules', entry({ id: 'weekday' }))).status).toBe(409);

    const slept = await p.call('POST', '/v0/sandboxes/box/schedules', entry({ type: 'sleep', value: '2h' }));
    expect(slept.body.type).toBe('at');
    expect(Date.parse(slept.body.value) - Date.now()).toBeGreaterThan(7_000_000);

    const list = await p.call('GET', '/v0/sandboxes/box/schedules?type=cron');
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual(['weekday']);
    expect(list.body.meta.total).toBe(2);
    const old = await p.call('GET', '/v0/sandboxes/box/schedules', undefined, { version: '2026-04-16' });
    expect(old.body).toHaveLength(2); // a bare array before 2026-04-28

    const updated = await p.call(
      'PUT',
      '/v0/sandboxes/box/schedules/weekday',
      entry({ value: '30 9 * * *' }),
    );
    expect(updated.body).toMatchObject({ id: 'weekday', value: '30 9 * * *' });
    const renamed = await p.call('PUT', '/v0/sandboxes/box/schedules/weekday', entry({ id: 'other' }));
    expect(renamed.status).toBe(400);

    const deleted = await p.call('DELETE', '/v0/sandboxes/box/schedules/weekday');
    expect(deleted.body.id).toBe('weekday');
    expect((await p.call('GET', '/v0/sandboxes/box/schedules/weekday')).status).toBe(404);
    expect((await p.call('GET', '/v0/sandboxes/box/schedule-executions')).body.data).toEqual([]);
  });

  it('names the bad field, and keeps other workspaces out', async () => {
    const bad = await p.call('POST', '/v0/sandboxes/box/schedules', entry({ value: '* * * *' }));
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'value', message: expect.stringContaining('5-field') }]);
    const noCommand = await p.call('POST', '/v0/sandboxes/box/schedules', {
      type: 'at',
      value: 'x',
      input: {},
    });
    expect(noCommand.status).toBe(400);
    expect(JSON.stringify(noCommand.body)).toContain('input.command');
    expect((await p.call('GET', '/v0/sandboxes/box/schedules?limit=101')).status).toBe(400);
    expect((await p.call('POST', '/v0/sandboxes/none/schedules', entry())).status).toBe(404);

    await p.call('POST', '/v0/sandboxes/box/schedules', entry({ id: 'mine' }));
    const as = { as: 'outsider' as const };
    expect((await p.call('GET', '/v0/sandboxes/box/schedules', undefined, as)).status).toBe(404);
    expect((await p.call('GET', '/v0/sandboxes/box/schedules/mine', undefined, as)).status).toBe(404);
    expect((await p.call('DELETE', '/v0/sandboxes/box/schedules/mine', undefined, as)).status).toBe(404);
    expect((await p.call('GET', '/v0/sandboxes/box/schedule-executions', undefined, as)).status).toBe(404);
  });
});
