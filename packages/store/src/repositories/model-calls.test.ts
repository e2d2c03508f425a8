// The model gateway's call log on both dialects: idempotent batch inserts, newest-first reads of
// one model of one workspace within a time range, the limit, and pruning by age.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { testDatabases } from '../test-support/databases.js';
import type { ModelCallRow } from './model-calls.js';

const call = (n: number, over: Partial<ModelCallRow> = {}): ModelCallRow => ({
  requestId: `req-${n}`,
  accountId: 'acc_1',
  workspace: 'ws-a',
  model: 'gpt',
  modelUuid: 'uuid-gpt',
  provider: 'openai',
  caller: 'usr_1',
  status: 200,
  latencyMs: 1.25 + n,
  promptTokens: 10,
  completionTokens: 5,
  totalTokens: 15,
  at: new Date(Date.UTC(2026, 10, 1, 0, n)).toISOString(),
  ...over,
});

describe.each(testDatabases(process.env))('model calls repository on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ store, dispose } = await db.open()));
  afterEach(async () => dispose());

  it('records a batch once (a retried batch inserts nothing twice) and reads it newest first', async () => {
    const batch = [
      call(1),
      call(2, { status: 429, promptTokens: null, completionTokens: null, totalTokens: null }),
    ];
    await store.modelCalls.record(batch);
    await store.modelCalls.record(batch);
    const rows = await store.modelCalls.list({ workspace: 'ws-a', model: 'gpt', limit: 10 });
    expect(rows).toEqual([batch[1], batch[0]]);
  });

  it('answers one model of one workspace only, within [from, to), at most limit rows', async () => {
    await store.modelCalls.record([
      call(1),
      call(2),
      call(3),
      call(4, { workspace: 'ws-b' }),
      call(5, { model: 'other' }),
    ]);
    const ids = async (q: { from?: string; to?: string; limit?: number; workspace?: string }) =>
      (await store.modelCalls.list({ workspace: 'ws-a', model: 'gpt', limit: 10, ...q })).map(
        (r) => r.requestId,
      );
    expect(await ids({})).toEqual(['req-3', 'req-2', 'req-1']);
    expect(await ids({ workspace: 'ws-b' })).toEqual(['req-4']); // same model name, other workspace: apart
    expect(await ids({ from: call(2).at })).toEqual(['req-3', 'req-2']);
    expect(await ids({ to: call(2).at })).toEqual(['req-1']);
    expect(await ids({ limit: 1 })).toEqual(['req-3']);
  });

  it('prunes the calls older than a cutoff and keeps the rest', async () => {
    await store.modelCalls.record([call(1), call(2), call(3)]);
    expect(await store.modelCalls.prune(call(3).at, 1)).toBe(2); // one row per statement: the loop goes on
    const rows = await store.modelCalls.list({ workspace: 'ws-a', model: 'gpt', limit: 10 });
    expect(rows.map((r) => r.requestId)).toEqual(['req-3']);
  });
});
