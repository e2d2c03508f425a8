// Issue "Platform core" §6 and spec "Pagination": the {data, meta} envelope from 2026-04-28 and a
// bare array before; limit, sort, q, total; signed cursors bound to their query that expire after
// 24 hours; and paging while items come and go never repeats or skips an item that stayed.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type Envelope<T> = { data: T[]; meta: { hasMore: boolean; nextCursor: string; total: number } };
type ErrorBody = { error: string; code: number; message: string; details?: { field: string }[] };
const V = '2026-04-28';

async function createWorkspaces(t: TestPlatform, names: string[], extra: (n: string) => object = () => ({})) {
  for (const name of names) {
    const res = await t.request('/v0/workspaces', { method: 'POST', body: { name, ...extra(name) } });
    expect(res.status, name).toBe(200);
  }
}

async function createServiceAccounts(t: TestPlatform, count: number, workspace = 'default') {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.json<{ client_id: string }>('/v0/service_accounts', {
      method: 'POST',
      workspace,
      body: { name: `sa-${String(i).padStart(3, '0')}` },
    });
    ids.push(res.body.client_id);
  }
  return ids;
}

async function pageAll<T>(t: TestPlatform, path: string, key: (item: T) => string) {
  const seen: string[] = [];
  let cursor = '';
  for (let i = 0; i < 1000; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await t.json<Envelope<T>>(
      `${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`,
      {
        version: V,
      },
    );
    expect(res.status).toBe(200);
    seen.push(...res.body.data.map(key));
    if (!res.body.meta.hasMore) {
      expect(res.body.meta.nextCursor).toBe('');
      return seen;
    }
    cursor = res.body.meta.nextCursor;
  }
  throw new Error('paging did not end');
}

describe.each(testDatabases(process.env))('management list pagination on $name', (db) => {
  let t: Platform;
  let now = Date.now();
  afterEach(async () => {
    // Dispose once: a test that failed before opening its platform must not dispose the last one again.
    const opened = t;
    t = undefined as unknown as Platform;
    await opened?.dispose();
  });
  const open = async () => {
    now = Date.now();
    t = await openTestPlatform(db, { now: () => now });
  };

  it('returns {data, meta} from 2026-04-28 and a bare array of everything before', async () => {
    await open();
    await createServiceAccounts(t, 55);
    for (const version of ['2026-04-16', '2026-04-20', undefined]) {
      const res = await t.json<unknown[]>('/v0/service_accounts', version ? { version } : {});
      expect(Array.isArray(res.body), String(version)).toBe(true);
      expect(res.body).toHaveLength(55);
    }
    const page = await t.json<Envelope<{ client_id: string }>>('/v0/service_accounts', { version: V });
    expect(Object.keys(page.body).sort()).toEqual(['data', 'meta']);
    expect(page.body.data).toHaveLength(50); // default limit
    expect(page.body.meta).toMatchObject({ hasMore: true, total: 55 });
    expect(page.body.meta.nextCursor).not.toBe('');
    const all = await pageAll<{ client_id: string }>(t, '/v0/service_accounts?limit=7', (s) => s.client_id);
    expect(all).toHaveLength(55);
    expect(new Set(all).size).toBe(55);
  }, 60_000);

  it('limit: 1 to 200; 0, 201 and non-integers are 400 naming query.limit', async () => {
    await open();
    await createServiceAccounts(t, 3);
    expect((await t.json<Envelope<unknown>>('/v0/service_accounts?limit=200', { version: V })).status).toBe(
      200,
    );
    const one = await t.json<Envelope<unknown>>('/v0/service_accounts?limit=1', { version: V });
    expect(one.body.data).toHaveLength(1);
    for (const limit of ['0', '201', '2.5', 'ten']) {
      const bad = await t.json<ErrorBody>(`/v0/service_accounts?limit=${limit}`, { version: V });
      expect(bad.status, limit).toBe(400);
      expect(bad.body.details![0]!.field).toBe('query.limit');
    }
  });

  it('sort: createdAt:desc (default), createdAt:asc, name:asc, name:desc', async () => {
    await open();
    const names = ['bravo', 'delta', 'alpha', 'charlie'];
    for (const name of names) {
      await createWorkspaces(t, [name]);
      now += 1000;
    }
    const order = async (sort?: string) =>
      (
        await pageAll<{ name: string }>(
          t,
          `/v0/workspaces?limit=2${sort ? `&sort=${sort}` : ''}`,
          (w) => w.name,
        )
      ).filter((n) => n !== 'default');
    expect(await order()).toEqual([...names].reverse());
    expect(await order('createdAt:desc')).toEqual([...names].reverse());
    expect(await order('createdAt:asc')).toEqual(names);
    expect(await order('name:asc')).toEqual([...names].sort());
    expect(await order('name:desc')).toEqual([...names].sort().reverse());
  });

  it('q: case-insensitive substring over name, displayName and labels, ignored under 2 characters; total ignores it', async () => {
    await open();
    await createWorkspaces(t, ['prod-eu', 'staging'], (name) =>
      name === 'staging' ? { displayName: 'Pre-Production', labels: { team: 'Platform' } } : {},
    );
    await createWorkspaces(t, ['sandbox'], () => ({ labels: { owner: 'prodigy-team' } }));
    const search = async (q: string) => {
      const res = await t.json<Envelope<{ name: string }>>(
        `/v0/workspaces?q=${encodeURIComponent(q)}&sort=name:asc`,
        {
          version: V,
        },
      );
      expect(res.status).toBe(200);
      expect(res.body.meta.total).toBe(4);
      return res.body.data.map((w) => w.name);
    };
    expect(await search('PROD')).toEqual(['prod-eu', 'sandbox', 'staging']); // name, label, displayName
    expect(await search('platform')).toEqual(['staging']);
    expect(await search('p')).toEqual(['default', 'prod-eu', 'sandbox', 'staging']);
    expect(await search(' ')).toHaveLength(4);
    expect(await search('zz')).toEqual([]);
    const tooLong = await t.json<ErrorBody>(`/v0/workspaces?q=${'x'.repeat(201)}`, { version: V });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.details![0]!.field).toBe('query.q');
  });

  it('total counts the whole workspace, not the page nor other workspaces', async () => {
    await open();
    await createServiceAccounts(t, 4);
    await createWorkspaces(t, ['other']);
    await createServiceAccounts(t, 2, 'other');
    const res = await t.json<Envelope<unknown>>('/v0/service_accounts?limit=1&q=zz-not-there', {
      version: V,
      workspace: 'default',
    });
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.total).toBe(4);
    const other = await t.json<Envelope<unknown>>('/v0/service_accounts?limit=1', {
      version: V,
      workspace: 'other',
    });
    expect(other.body.meta.total).toBe(2);
  });

  it('a cursor reused on another query, tampered with, or older than 24 hours is a 400 with its own code', async () => {
    await open();
    await createWorkspaces(t, ['other']);
    await createServiceAccounts(t, 5, 'default');
    await createServiceAccounts(t, 5, 'other');
    const first = await t.json<Envelope<unknown>>('/v0/service_accounts?limit=2&sort=name:asc', {
      version: V,
      workspace: 'default',
    });
    const cursor = encodeURIComponent(first.body.meta.nextCursor);
    const next = (query: string, workspace = 'default') =>
      t.json<ErrorBody>(`/v0/service_accounts?${query}`, { version: V, workspace });
    expect((await next(`limit=2&sort=name:asc&cursor=${cursor}`)).status).toBe(200);
    // A different page size is the same query.
    expect((await next(`limit=3&sort=name:asc&cursor=${cursor}`)).status).toBe(200);
    for (const [query, workspace] of [
      [`limit=2&sort=name:desc&cursor=${cursor}`, 'default'],
      [`limit=2&sort=name:asc&q=sa-&cursor=${cursor}`, 'default'],
      [`limit=2&sort=name:asc&cursor=${cursor}`, 'other'],
    ] as const) {
      const res = await next(query, workspace);
      expect(res.status, `${query} in ${workspace}`).toBe(400);
      expect(res.body.error).toBe('cursor_mismatch');
      expect(res.body.details![0]!.field).toBe('query.cursor');
    }
    // Same binding on another route (workspaces list) is refused too.
    const otherRoute = await t.json<ErrorBody>(`/v0/api_keys?limit=2&sort=name:asc&cursor=${cursor}`, {
      version: V,
    });
    expect(otherRoute.body.error).toBe('cursor_mismatch');

    const raw = first.body.meta.nextCursor;
    const [body, signature] = raw.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString()) as { k: string };
    payload.k = 'zzzz';
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
    for (const bad of [forged, `${raw}x`, 'garbage', `${body}.`]) {
      const res = await next(`limit=2&sort=name:asc&cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toBe('invalid_cursor');
    }

    now += 24 * 3600_000 + 1000;
    const expired = await next(`limit=2&sort=name:asc&cursor=${cursor}`);
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('cursor_expired');
  });

  it('property: paging while items are added and deleted never repeats or skips an item that stayed', async () => {
    await open();
    const initial = await createServiceAccounts(t, 12);
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('createdAt:desc', 'createdAt:asc', 'name:asc', 'name:desc'),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat(), fc.nat({ max: 2 })), { minLength: 1, maxLength: 10 }),
        async (sort, limit, changes) => {
          const current = (await t.json<{ client_id: string }[]>('/v0/service_accounts')).body.map(
            (s) => s.client_id,
          );
          const deleted = new Set<string>();
          const seen: string[] = [];
          let cursor = '';
          let step = 0;
          for (;;) {
            const res = await t.json<Envelope<{ client_id: string }>>(
              `/v0/service_accounts?sort=${sort}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
              { version: V },
            );
            expect(res.status).toBe(200);
            seen.push(...res.body.data.map((s) => s.client_id));
            const change = changes[step++ % changes.length]!;
            for (let i = 0; i < change[2]; i++) {
              if (change[0]) {
                now += 1;
                const created = await t.json<{ client_id: string }>('/v0/service_accounts', {
                  method: 'POST',
                  body: { name: `new-${counter++}` },
                });
                expect(created.status).toBe(200);
              } else {
                const remaining = current.filter((id) => !deleted.has(id));
                const victim = remaining[(change[1] + i) % Math.max(remaining.length, 1)];
                if (victim && remaining.length > 6) {
                  deleted.add(victim);
                  await t.request(`/v0/service_accounts/${victim}`, { method: 'DELETE' });
                }
              }
            }
            if (!res.body.meta.hasMore) break;
            cursor = res.body.meta.nextCursor;
          }
          expect(new Set(seen).size).toBe(seen.length); // never repeated
          for (const id of current) if (!deleted.has(id)) expect(seen).toContain(id); // never skipped
        },
      ),
      { numRuns: 15, seed: 20260428 },
    );
    expect(initial).toHaveLength(12);
  }, 120_000);
});
