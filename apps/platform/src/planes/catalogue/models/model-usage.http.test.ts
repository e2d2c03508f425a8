// GET /v0/models/{modelName}/usage over HTTP (in-process), on SQLite and PostgreSQL (issue 18
// "Usage is queryable"): the calls the gateway's log wrote, newest first, filtered by time, bounded
// by `limit`; bad parameters are a 400 naming them; a caller of another workspace or account sees
// none of them; the route is in the OpenAPI document.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';
import { modelCallLog, type LoggedModelCall } from '../../metering/model-call-log.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type ErrorBody = { error: string; message: string; details?: { field: string; message: string }[] };
type Usage = {
  model: string;
  workspace: string;
  retentionDays: number;
  data: Array<Record<string, unknown>>;
  meta: { hasMore: boolean };
};

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const model = { metadata: { name: 'gpt' }, spec: { runtime: { type: 'openai', model: 'gpt-4o-mini' } } };

describe.each(testDatabases(process.env))('model usage route on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
  });
  afterEach(async () => t.dispose());

  const call = (n: number, over: Partial<LoggedModelCall> = {}): LoggedModelCall => ({
    requestId: `chatcmpl-${n}`,
    at: T0 + n * 1000,
    accountId: t.accountId,
    workspace: 'default',
    model: 'gpt',
    modelUuid: 'uuid-gpt',
    provider: 'openai',
    caller: t.adminId,
    status: 200,
    latencyMs: 12.3456789,
    usage: { prompt: 11, completion: 7, total: 18 },
    ...over,
  });
  /** Written the way the gateway's usage recorder writes them (metering/model-call-log.ts). */
  const record = (calls: LoggedModelCall[]) =>
    modelCallLog(t.store, { retentionMs: 10 * 365 * 86_400_000 }).record(calls);

  it('answers each call (tokens, latency, status, caller), newest first, within the time range and limit', async () => {
    expect((await t.json('/v0/models/gpt', { method: 'PUT', body: model })).status).toBe(200);
    await record([call(1), call(2, { status: 429, usage: undefined }), call(3)]);

    const all = await t.json<Usage>('/v0/models/gpt/usage');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ model: 'gpt', workspace: 'default', retentionDays: 30 });
    expect(all.body.meta.hasMore).toBe(false);
    expect(all.body.data.map((c) => c.requestId)).toEqual(['chatcmpl-3', 'chatcmpl-2', 'chatcmpl-1']);
    expect(all.body.data[0]).toEqual({
      requestId: 'chatcmpl-3',
      at: new Date(T0 + 3000).toISOString(),
      caller: t.adminId,
      status: 200,
      latencyMs: 12.346,
      provider: 'openai',
      promptTokens: 11,
      completionTokens: 7,
      totalTokens: 18,
    });
    expect(all.body.data[1]).toMatchObject({ status: 429, promptTokens: null, totalTokens: null });

    const page = await t.json<Usage>('/v0/models/gpt/usage?limit=2');
    expect(page.body.data).toHaveLength(2);
    expect(page.body.meta.hasMore).toBe(true);

    const start = new Date(T0 + 2000).toISOString();
    const end = new Date(T0 + 3000).toISOString();
    const window = await t.json<Usage>(`/v0/models/gpt/usage?startTime=${start}&endTime=${end}`);
    expect(window.body.data.map((c) => c.requestId)).toEqual(['chatcmpl-2']);
  });

  it('refuses bad parameters with a 400 naming them, and answers 404 for a model the workspace lacks', async () => {
    await t.json('/v0/models/gpt', { method: 'PUT', body: model });
    const cases: Array<[string, string]> = [
      ['limit=1001', 'query.limit'],
      ['limit=0', 'query.limit'],
      ['limit=ten', 'query.limit'],
      ['startTime=yesterday', 'query.startTime'],
      ['startTime=2026-11-20T12:00:00Z&endTime=2026-11-20T12:00:00Z', 'query.endTime'],
    ];
    for (const [query, field] of cases) {
      const res = await t.json<ErrorBody>(`/v0/models/gpt/usage?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.details?.map((d) => d.field) ?? [], query).toContain(field);
    }
    const missing = await t.json<ErrorBody>('/v0/models/nope/usage');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain('nope');
  });

  it("shows a caller of another workspace or account none of this workspace's calls", async () => {
    await t.json('/v0/models/gpt', { method: 'PUT', body: model });
    await record([call(1), call(2)]);

    // Another account with its own workspace and its own model of the same name.
    const other = await t.addAccount({ workspace: 'rival' });
    const own = await t.json('/v0/models/gpt', {
      method: 'PUT',
      body: model,
      key: other.apiKey,
      workspace: 'rival',
    });
    expect(own.status).toBe(200);
    const theirs = await t.json<Usage>('/v0/models/gpt/usage', { key: other.apiKey, workspace: 'rival' });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    // Asking for the victim's workspace by name: refused by the workspace check, no data.
    const peek = await t.json<ErrorBody & Partial<Usage>>('/v0/models/gpt/usage', {
      key: other.apiKey,
      workspace: 'default',
    });
    expect([403, 404]).toContain(peek.status);
    expect(peek.body.data).toBeUndefined();
    // No credentials at all.
    expect((await t.json('/v0/models/gpt/usage', { key: null })).status).toBe(401);
  });

  it('is in the OpenAPI document with its filters', async () => {
    const doc = await t.json<{
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;
    }>('/v0/openapi.json');
    const op = doc.body.paths['/v0/models/{modelName}/usage']?.get;
    expect(op).toBeDefined();
    expect(op!.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(['modelName', 'startTime', 'endTime', 'limit']),
    );
  });
});
