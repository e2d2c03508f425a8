// The executions list's two contracts (reference §1.4): before 2026-04-28 a bare array window of
// `limit` (default 20, maximum 100) and `offset`, newest first, bad values 400 naming the field;
// from 2026-04-28 the cursor `{data, meta}` form. In-process; the runner is not started, so the
// executions only need to exist.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
const COUNT = 25;
const CURSOR_API = '2026-04-28';

describe.each(testDatabases(process.env))('executions list on $name', (db) => {
  let t: Platform;
  // Newest first: the last created is exec-24.
  const newestFirst = Array.from({ length: COUNT }, (_, i) => `exec-${COUNT - 1 - i}`);

  beforeAll(async () => {
    t = await openTestPlatform(db);
    const job = await t.json('/v0/jobs', {
      method: 'POST',
      body: { metadata: { name: 'lister' }, spec: { runtime: { image: 'e2e/task:1', memory: 256 } } },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    for (let i = 0; i < COUNT; i++) {
      const res = await t.json('/v0/jobs/lister/executions', {
        method: 'POST',
        body: { tasks: [{ i }], id: `exec-${i}` },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      // Distinct createdAt (millisecond clock) so "newest first" is one order.
      await new Promise((r) => setTimeout(r, 3));
    }
  });
  afterAll(async () => t.dispose());

  const legacy = (query: string) => t.json<any>(`/v0/jobs/lister/executions${query}`);
  const ids = (body: any[]) => body.map((e) => e.metadata.id as string);

  it('before 2026-04-28: a bare array of 20 by default, newest first', async () => {
    const res = await legacy('');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(ids(res.body)).toEqual(newestFirst.slice(0, 20));
  });

  it('before 2026-04-28: limit and offset select a window; past the end is empty', async () => {
    expect(ids((await legacy('?limit=5&offset=3')).body)).toEqual(newestFirst.slice(3, 8));
    expect(ids((await legacy('?limit=100&offset=20')).body)).toEqual(newestFirst.slice(20));
    expect((await legacy('?offset=25')).body).toEqual([]);
    // The cursor parameters are not part of this contract: a cursor is ignored, not decoded.
    expect(ids((await legacy('?limit=2&cursor=garbage')).body)).toEqual(newestFirst.slice(0, 2));
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=x', 'offset'],
    ['offset=100001', 'offset'],
  ])('before 2026-04-28: %s is 400 naming %s', async (query, field) => {
    const res = await legacy(`?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toContain(field);
  });

  it('from 2026-04-28: {data, meta} pages by cursor; limit up to 200, offset not used', async () => {
    const first = await t.json<any>('/v0/jobs/lister/executions?limit=10', { version: CURSOR_API });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(ids(first.body.data)).toEqual(newestFirst.slice(0, 10));
    expect(first.body.meta).toMatchObject({ hasMore: true, total: COUNT });
    const seen = [...ids(first.body.data)];
    let cursor: string = first.body.meta.nextCursor;
    while (cursor) {
      const page = await t.json<any>(
        `/v0/jobs/lister/executions?limit=10&cursor=${encodeURIComponent(cursor)}`,
        { version: CURSOR_API },
      );
      expect(page.status).toBe(200);
      seen.push(...ids(page.body.data));
      cursor = page.body.meta.nextCursor;
    }
    expect(seen).toEqual(newestFirst);
    // 150 is over the legacy maximum but within the cursor contract's.
    const big = await t.json<any>('/v0/jobs/lister/executions?limit=150', { version: CURSOR_API });
    expect(big.status).toBe(200);
    expect(big.body.data).toHaveLength(COUNT);
    const bad = await t.json<any>('/v0/jobs/lister/executions?limit=201', { version: CURSOR_API });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('limit');
  });
});
