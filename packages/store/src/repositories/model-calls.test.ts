// The model gateway's call log on both dialects: a batch is one row per (workspace, model) and
// lands once however often it is written; reads are newest call first across overlapping batches,
// within a time range and limit, one model of one workspace only; pruning goes by age.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { testDatabases } from '../test-support/databases.js';
import type { ModelCallRow } from './model-calls.js';

const at = (n: number) => new Date(Date.UTC(2026, 10, 1, 0, n)).toISOString();
const call = (n: number, over: Partial<ModelCallRow> = {}): ModelCallRow => ({
  requestId: `req-${String(n).padStart(3, '0')}`,
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
  at: at(n),
  ...over,
});

describe.each(testDatabases(process.env))('model calls repository on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ store, dispose } = await db.open()));
  afterEach(async () => dispose());
  const ids = async (
    q: { from?: string; to?: string; limit?: number; workspace?: string; model?: string } = {},
  ) =>
    (await store.modelCalls.list({ workspace: 'ws-a', model: 'gpt', limit: 1000, ...q })).map(
      (r) => r.requestId,
    );

  it('records a batch once (a retried batch inserts nothing twice) and reads every field back', async () => {
    const batch = [
      call(1),
      call(2, { status: 429, promptTokens: null, completionTokens: null, totalTokens: null }),
    ];
    await store.modelCalls.record(batch);
    await store.modelCalls.record(batch);
    expect(await store.modelCalls.list({ workspace: 'ws-a', model: 'gpt', limit: 10 })).toEqual([
      batch[1],
      batch[0],
    ]);
  });

  it('answers one model of one workspace, newest first across overlapping batches, within [from, to) and limit', async () => {
    // One recorder batch mixing workspaces and models; then batches whose times overlap (a slow
    // call ends after a later fast one), more of them than one page of reads.
    await store.modelCalls.record([call(1), call(4, { workspace: 'ws-b' }), call(5, { model: 'other' })]);
    for (let b = 0; b < 20; b++) await store.modelCalls.record([call(10 + b * 2), call(13 + b * 2)]);
    const expected = [1, ...Array.from({ length: 20 }, (_, b) => [10 + b * 2, 13 + b * 2]).flat()]
      .sort((x, y) => y - x)
      .map((n) => `req-${String(n).padStart(3, '0')}`);
    expect(await ids()).toEqual(expected);
    expect(await ids({ limit: 5 })).toEqual(expected.slice(0, 5));
    expect(await ids({ workspace: 'ws-b' })).toEqual(['req-004']); // same model name, other workspace
    expect(await ids({ model: 'other' })).toEqual(['req-005']);
    expect(await ids({ from: at(40), to: at(45) })).toEqual([
      'req-044',
      'req-043',
      'req-042',
      'req-041',
      'req-040',
    ]);
    expect(await ids({ to: at(10) })).toEqual(['req-001']);
  });

  it('prunes the batches whose calls are all older than a cutoff, in chunks, and keeps the rest', async () => {
    for (const n of [1, 2, 3]) await store.modelCalls.record([call(n)]);
    expect(await store.modelCalls.prune(at(3), 1)).toBe(2); // one batch per statement: the loop goes on
    expect(await ids()).toEqual(['req-003']);
  });
});
