import { coreRoutes } from '@tarmac/contract';
import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, TarmacConnectionError } from './http/errors.js';
import type { FetchLike } from './http/transport.js';
import { Tarmac } from './tarmac.js';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A scripted fetch: answers in order, records what it was sent. */
function fakeFetch(answers: (Response | Error | ((seen: Seen) => Response))[]) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (input, init = {}) => {
    const request: Seen = {
      method: init.method ?? 'GET',
      url: String(input),
      headers: Object.fromEntries(new Headers(init.headers)),
      body: typeof init.body === 'string' ? init.body : undefined,
    };
    seen.push(request);
    const next = answers.shift();
    if (!next) throw new Error(`unexpected request ${request.method} ${request.url}`);
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next(request) : next;
  };
  return { fetch, seen };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const refused = () =>
  new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED', message: 'connect refused' } });
const fastRetry = { retries: 3, baseDelayMs: 1, maxDelayMs: 2 };
const workspace = { id: 'w1', name: 'default', displayName: 'Default' };

describe('TarmacClient.request', () => {
  it('sends bearer, workspace and pinned version headers and fills encoded path params', async () => {
    const { fetch, seen } = fakeFetch([json(workspace)]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1/', apiKey: 'ak_x', workspace: 'default', fetch });
    const got = await tarmac.request(coreRoutes.getWorkspace, { params: { name: 'a b/c' } });
    expect(got.name).toBe('default');
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: 'http://api:1/v0/workspaces/a%20b%2Fc',
      headers: {
        authorization: 'Bearer ak_x',
        'x-service-workspace': 'default',
        'service-version': '2026-04-28',
      },
    });
  });

  it('sends JSON bodies and throws typed errors from the error body', async () => {
    const { fetch, seen } = fakeFetch([
      json({ error: 'conflict', code: 409, message: 'workspace "x" already exists' }, 409),
    ]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', apiKey: 'k', fetch });
    const error = await tarmac.workspaces.create({ name: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).message).toBe('workspace "x" already exists');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ name: 'x' });
  });

  it('retries idempotent calls on connection errors with backoff, then gives up with the cause', async () => {
    const ok = fakeFetch([refused(), refused(), json(workspace)]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', fetch: ok.fetch, retry: fastRetry });
    expect((await tarmac.workspaces.get('default')).id).toBe('w1');
    expect(ok.seen).toHaveLength(3);

    const down = fakeFetch([refused(), refused(), refused(), refused()]);
    const client = new Tarmac({ apiUrl: 'http://api:1', fetch: down.fetch, retry: fastRetry });
    const error = await client.workspaces.delete('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TarmacConnectionError);
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(down.seen).toHaveLength(4);
  });

  it('never retries a POST, which may have reached the server', async () => {
    const { fetch, seen } = fakeFetch([refused(), json(workspace)]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', fetch, retry: fastRetry });
    await expect(tarmac.workspaces.create({ name: 'x' })).rejects.toBeInstanceOf(TarmacConnectionError);
    expect(seen).toHaveLength(1);
  });

  it('does not retry HTTP error answers', async () => {
    const { fetch, seen } = fakeFetch([json({ error: 'not_found', code: 404, message: 'gone' }, 404)]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', fetch, retry: fastRetry });
    await expect(tarmac.workspaces.get('x')).rejects.toBeInstanceOf(NotFoundError);
    expect(seen).toHaveLength(1);
  });
});

describe('pagination', () => {
  it('walks pages with for-await, passing each nextCursor and the query', async () => {
    const page = (names: string[], hasMore: boolean, nextCursor: string) =>
      json({ data: names.map((name) => ({ ...workspace, name })), meta: { hasMore, nextCursor, total: 3 } });
    const { fetch, seen } = fakeFetch([page(['a', 'b'], true, 'c1'), page(['c'], false, '')]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', fetch });
    const names: string[] = [];
    for await (const ws of tarmac.workspaces.list({ limit: 2, sort: 'name:asc' })) names.push(ws.name);
    expect(names).toEqual(['a', 'b', 'c']);
    expect(seen.map((s) => s.url)).toEqual([
      'http://api:1/v0/workspaces?limit=2&sort=name%3Aasc',
      'http://api:1/v0/workspaces?limit=2&sort=name%3Aasc&cursor=c1',
    ]);
  });

  it('accepts the bare-array shape of older versions', async () => {
    const { fetch } = fakeFetch([json([workspace])]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', fetch, apiVersion: '2026-04-16' });
    expect(await tarmac.workspaces.list().all()).toEqual([workspace]);
  });
});

describe('client credentials', () => {
  it('exchanges id and secret once with HTTP Basic and reuses the token until half its life', async () => {
    const token = json({ access_token: 'jwt1', token_type: 'Bearer', expires_in: 900, refresh_token: 'r' });
    const { fetch, seen } = fakeFetch([token, json([]), json([])]);
    const tarmac = new Tarmac({ apiUrl: 'http://api:1', clientId: 'sa', clientSecret: 'sec', fetch });
    await tarmac.workspaces.list().all();
    await tarmac.accounts.list().all();
    expect(seen[0]?.url).toBe('http://api:1/oauth/token');
    expect(seen[0]?.headers.authorization).toBe(`Basic ${btoa('sa:sec')}`);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ grant_type: 'client_credentials' });
    expect(seen.slice(1).map((s) => s.headers.authorization)).toEqual(['Bearer jwt1', 'Bearer jwt1']);
  });
});
