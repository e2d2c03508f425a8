// The model gateway's call log over a real store (SQLite and PostgreSQL): a batch lands once even
// when written again, and retention deletes what is older than the
// window — at most once a minute, from the batch write (never on the request path).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@tarmac/store';
import { testDatabases } from '../../test-support/harness.js';
import { modelCallLog, type LoggedModelCall } from './model-call-log.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
const call = (n: number, at: number): LoggedModelCall => ({
  requestId: `r${n}`,
  at,
  accountId: 'acc',
  workspace: 'ws',
  model: 'm',
  modelUuid: 'uuid-m',
  provider: 'openai',
  caller: 'usr',
  status: 200,
  latencyMs: 1,
  usage: { prompt: 1, completion: 2, total: 3 },
});

describe.each(testDatabases(process.env))('model call log on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ store, dispose } = await db.open()));
  afterEach(async () => dispose());
  const ids = async () =>
    (await store.modelCalls.list({ workspace: 'ws', model: 'm', limit: 1000 })).map((r) => r.requestId);

  it('writes a batch once, however often it is written', async () => {
    const log = modelCallLog(store, { retentionMs: 30 * DAY, now: () => T0 });
    const batch = Array.from({ length: 10 }, (_, i) => call(i, T0 - i));
    await log.record(batch);
    await log.record(batch); // a retried batch (the recorder resends a failed one as it was)
    expect((await ids()).sort()).toEqual(batch.map((c) => c.requestId).sort());
  });

  it('prunes calls past retention, at most once per interval', async () => {
    let now = T0;
    const log = modelCallLog(store, { retentionMs: 2 * DAY, now: () => now, pruneEveryMs: 60_000 });
    await log.record([call(1, T0 - 3 * DAY)]); // the first write prunes after writing: r1 is past
    expect(await ids()).toEqual([]);
    await log.record([call(2, T0 - DAY)]);
    await log.record([call(3, T0 - 5 * DAY)]); // within the interval: not pruned yet
    expect((await ids()).sort()).toEqual(['r2', 'r3']);
    now += 60_000;
    await log.record([call(4, now)]); // a minute on: the calls past two days go
    expect((await ids()).sort()).toEqual(['r2', 'r4']);
    expect(log.retentionDays).toBe(2);
  });
});
