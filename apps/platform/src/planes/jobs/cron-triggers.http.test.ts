// Cron triggers over the real store (SQLite and PostgreSQL) with a clock the test moves (issue 17):
// no back-fill for a new trigger, one execution per minute, none twice for a minute across a
// "restart" (a new CronTriggers over the same store), at most one caught up after downtime, and a
// failed start retried with the same id.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../framework/secrets.js';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';
import { jobReader } from '../catalogue/jobs/job-reader.js';
import { CronTriggers } from './cron-triggers.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
const at = (hms: string) => Date.parse(`2026-03-01T${hms}Z`);
const minuteOf = (hms: string) => at(hms) / 60_000;

describe.each(testDatabases(process.env))('cron triggers on $name', (db) => {
  let t: Platform;
  let now = 0;
  const fired: string[] = [];
  let failNext = false;
  const triggers = () =>
    new CronTriggers({
      jobs: jobReader(t.store, new SecretBox(new Uint8Array(32))),
      state: {
        get: (ws, kind, name, parent) => t.store.resources.get(ws, kind, name, parent),
        create: (row) => t.store.resources.create(row),
        update: (id, patch) => t.store.resources.update(id, patch),
      },
      fire: async (job, id, tasks) => {
        if (failNext) {
          failNext = false;
          throw new Error('store down');
        }
        if (!fired.includes(id)) fired.push(id); // the real create is idempotent by id
        expect(job.name).toBe('ticker');
        expect(tasks).toEqual([{ n: 1 }]);
      },
      logger: pino({ level: 'silent' }),
      now: () => now,
    });

  beforeEach(async () => {
    fired.length = 0;
    t = await openTestPlatform(db);
    const res = await t.json('/v0/jobs', {
      method: 'POST',
      body: {
        metadata: { name: 'ticker' },
        spec: {
          runtime: { image: 'x/y:1' },
          triggers: [
            { id: 'every', type: 'cron', configuration: { schedule: '* * * * *', tasks: [{ n: 1 }] } },
          ],
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
  afterEach(async () => t.dispose());

  it('fires once per minute, never twice across a restart, one catch-up after downtime', async () => {
    const cron = triggers();
    now = at('10:00:30');
    await cron.tick(); // first seen: counts from this minute, no back-fill
    expect(fired).toEqual([]);
    now = at('10:01:01');
    await cron.tick();
    expect(fired).toEqual([`cron-every-${minuteOf('10:01:00')}`]);
    now = at('10:01:40');
    await cron.tick();
    // A restart in the same minute: a new instance over the same store.
    await triggers().tick();
    expect(fired).toHaveLength(1);
    // Down from 10:01:40 to 10:09:10: one execution for what was missed, then on schedule.
    const after = triggers();
    now = at('10:09:10');
    await after.tick();
    now = at('10:09:50');
    await after.tick();
    expect(fired).toEqual([`cron-every-${minuteOf('10:01:00')}`, `cron-every-${minuteOf('10:02:00')}`]);
    now = at('10:10:00');
    await after.tick();
    expect(fired.at(-1)).toBe(`cron-every-${minuteOf('10:10:00')}`);
    expect(fired).toHaveLength(3);
  });

  it('retries a start that failed with the same execution id', async () => {
    const cron = triggers();
    now = at('11:00:10');
    await cron.tick();
    failNext = true;
    now = at('11:01:00');
    await cron.tick();
    expect(fired).toEqual([]);
    now = at('11:01:01');
    await cron.tick();
    expect(fired).toEqual([`cron-every-${minuteOf('11:01:00')}`]);
  });
});
