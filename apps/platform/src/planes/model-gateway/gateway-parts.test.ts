import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../framework/change-feed.js';
import { escapesBase } from './exchange.js';
import type { GatewayError } from './gateway-error.js';
import { modelAddress, operationOf } from './model-address.js';
import { ModelResolver, type ModelCatalogue } from './model-resolver.js';
import { SseParser } from './sse.js';
import { periodOf, TokenBudgets } from './token-budget.js';
import { UsageRecorder, type ModelCall } from './usage-recorder.js';

describe('model addresses', () => {
  it('reads workspace, model and sub-path; leaves the management API alone', () => {
    expect(modelAddress('/ws/models/m/v1/chat/completions?x=1')).toEqual({
      workspace: 'ws',
      model: 'm',
      path: '/v1/chat/completions',
      query: '?x=1',
    });
    expect(modelAddress('/ws/models/m')).toMatchObject({ path: '' });
    expect(modelAddress('/v0/models/m')).toBeUndefined();
    expect(modelAddress('/ws/agents/m')).toBeUndefined();
    expect(operationOf('POST', '/chat/completions')).toBe('chat');
    expect(operationOf('POST', '/v1/chat/completions')).toBe('chat');
    expect(operationOf('POST', '')).toBe('chat');
    expect(operationOf('GET', '/v1/models')).toBe('list-models');
    expect(operationOf('POST', '/embeddings')).toBe('embeddings');
    expect(operationOf('POST', '/v1/messages')).toBe('passthrough');
  });
});

describe('pass-through paths', () => {
  it('refuse dot segments in every spelling, so a caller cannot step out of the base path', () => {
    for (const p of ['/../x', '/v1/..', '/%2e%2e/x', '/%2E%2e/x', '/./x', '/a%2f..%2fb', '/a%5c..', '/%zz'])
      expect(escapesBase(p), p).toBe(true);
    for (const p of ['/v1/messages', '/v1beta/models/g:generateContent', '/a..b/c', ''])
      expect(escapesBase(p), p).toBe(false);
  });
});

describe('SseParser', () => {
  it('joins data lines, names events, skips comments, survives CRLF and UTF-8 split across chunks', () => {
    const seen: Array<[string | undefined, string]> = [];
    const p = new SseParser((e, d) => seen.push([e, d]));
    const wire = Buffer.from(': hi\r\nevent: a\r\ndata: x\r\ndata: é\r\n\r\ndata:y\n\n');
    for (let i = 0; i < wire.length; i++) p.push(wire.subarray(i, i + 1));
    p.end();
    expect(seen).toEqual([
      ['a', 'x\né'],
      [undefined, 'y'],
    ]);
  });
});

describe('token budgets', () => {
  const policy = (maxTokens: Record<string, unknown>) => ({
    workspace: 'ws',
    name: 'm',
    uuid: 'u',
    accountId: 'a',
    policies: [{ name: 'p', spec: { type: 'maxToken', maxTokens } as never }],
  });

  it('periods are step × granularity; months are calendar months', () => {
    const t = Date.UTC(2026, 10, 25, 13, 30);
    expect(periodOf({ granularity: 'hour', step: 2 }, t).endsAt).toBe(Date.UTC(2026, 10, 25, 14));
    expect(periodOf({ granularity: 'month', step: 2 }, t).endsAt).toBe(Date.UTC(2027, 0, 1));
    expect(periodOf({ granularity: 'minute', step: 2 }, t).endsAt).toBe(Date.UTC(2026, 10, 25, 13, 32));
  });

  it('lets the first request over the cap pass, refuses the next with 429 naming the policy, resets next period', async () => {
    let now = Date.UTC(2026, 0, 1, 0, 0, 10);
    const b = new TokenBudgets(() => now);
    const m = policy({ granularity: 'minute', step: 2, input: 0, output: 10, total: 0 });
    await b.check(m);
    b.add(m, { prompt: 100, completion: 6, total: 106 }); // input is not limited (0)
    await b.check(m);
    b.add(m, { prompt: 1, completion: 6, total: 7 });
    const err = (await b.check(m).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(429);
    expect(err.message).toContain('"p"');
    expect(err.headers['retry-after']).toBe('110');
    now += 120_000;
    await expect(b.check(m)).resolves.toBeUndefined();
  });

  it('seeds a period once from the recorded history, so a restart does not reset the budget', async () => {
    const asked: number[] = [];
    const now = Date.UTC(2026, 0, 3, 5, 30);
    const b = new TokenBudgets(() => now, {
      tokensSince: async (_m, from) => {
        asked.push(from);
        return { input: 20, output: 15 };
      },
    });
    const m = policy({ granularity: 'day', step: 2, input: 0, output: 0, total: 40 });
    await Promise.all([b.check(m), b.check(m)]);
    expect(asked).toEqual([Date.UTC(2026, 0, 3)]); // once, from the period's start (2-day periods from the epoch)
    b.add(m, { prompt: 3, completion: 3, total: 6 }); // 35 + 6 = 41 ≥ 40
    await expect(b.check(m)).rejects.toThrow(/"p"/);
  });
});

describe('UsageRecorder', () => {
  const call = (i: number): ModelCall => ({
    requestId: `r${i}`,
    at: 0,
    accountId: 'a',
    workspace: 'w',
    model: 'm',
    modelUuid: 'u',
    provider: 'openai',
    caller: 'c',
    status: 200,
    latencyMs: 1,
    usage: { prompt: 1, completion: 1, total: 2 },
  });

  it('writes in batches off the request path, and keeps a failed batch for the next write', async () => {
    const batches: string[][] = [];
    let fail = true;
    const r = new UsageRecorder(
      {
        record: async (calls) => {
          if (fail) throw new Error('store down');
          batches.push(calls.map((c) => c.requestId));
        },
      },
      { flushMs: 10_000, maxBatch: 3 },
    );
    r.add(call(1));
    r.add(call(2));
    expect(batches).toEqual([]); // nothing written per request
    await r.flush();
    expect(batches).toEqual([]);
    fail = false;
    r.add(call(3)); // third call fills a batch
    await r.flush();
    await r.close();
    expect(batches.flat()).toEqual(['r1', 'r2', 'r3']);
  });
});

describe('model resolver', () => {
  const record = (model: string) => ({
    uuid: 'u',
    accountId: 'a',
    spec: { enabled: true, runtime: { type: 'openai', model } } as never,
    connections: [],
    policies: [],
  });

  it('re-reads a model in use after half its TTL in the background; a change notice meanwhile wins', async () => {
    let now = 0;
    let upstreamModel = 'v1';
    let reads = 0;
    let release: (() => void) | undefined;
    const catalogue: ModelCatalogue = {
      kinds: ['model'],
      get: async () => {
        reads++;
        const seen = upstreamModel; // what the store held when the read started
        if (release === undefined && reads > 2) await new Promise<void>((r) => (release = r));
        return record(seen);
      },
    };
    const feed = new ChangeFeed();
    const models = new ModelResolver(catalogue, feed, 1000, () => now);
    expect((await models.get('ws', 'm'))?.upstreamModel).toBe('v1');
    now = 400; // young: the cached entry, no read
    await models.get('ws', 'm');
    expect(reads).toBe(1);
    now = 600; // past half its life: answered from cache at once, read again behind it
    upstreamModel = 'v2';
    expect((await models.get('ws', 'm'))?.upstreamModel).toBe('v1');
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    now = 1050; // the first entry (read at 0) would have expired: the refreshed one (600) serves
    expect((await models.get('ws', 'm'))?.upstreamModel).toBe('v2');
    expect(reads).toBe(2);

    now = 1200; // refresh again, but hold the read; the record changes and its notice drops the entry
    upstreamModel = 'stale';
    await models.get('ws', 'm');
    upstreamModel = 'v3';
    feed.publish({ kind: 'model', workspace: 'ws', name: 'm' });
    release?.();
    await new Promise((r) => setImmediate(r));
    expect((await models.get('ws', 'm'))?.upstreamModel).toBe('v3'); // read afresh: the held read is dropped
    models.close();
  });

  it('peek answers only what get would, once settled; never a failed read or after a change notice', async () => {
    let now = 0;
    let fail = false;
    const catalogue: ModelCatalogue = {
      kinds: ['model'],
      get: async (_ws, name) => {
        if (fail) throw new Error('store down');
        return name === 'm' ? record('v1') : undefined;
      },
    };
    const feed = new ChangeFeed();
    const models = new ModelResolver(catalogue, feed, 1000, () => now);
    expect(models.peek('ws', 'm')).toBeUndefined(); // not read yet
    const pending = models.get('ws', 'm');
    expect(models.peek('ws', 'm')).toBeUndefined(); // read, not settled
    await pending;
    expect(models.peek('ws', 'm')?.model?.upstreamModel).toBe('v1');
    await models.get('ws', 'none');
    expect(models.peek('ws', 'none')).toEqual({ model: undefined }); // "no such model" is an answer
    feed.publish({ kind: 'model', workspace: 'ws', name: 'm' });
    expect(models.peek('ws', 'm')).toBeUndefined(); // dropped by the notice
    fail = true;
    await models.get('ws', 'm').catch(() => undefined);
    expect(models.peek('ws', 'm')).toBeUndefined(); // a failed read is not remembered
    fail = false;
    await models.get('ws', 'm');
    now = 1000;
    expect(models.peek('ws', 'm')).toBeUndefined(); // expired
    models.close();
  });
});
