// Issue "Platform core" §6 and spec "Pagination": the {data, meta} envelope from 2026-04-28 and a
// bare array before; limit, sort, q, total; signed cursors bound to their query that expire after
// 24 hours; and paging while items come and go never repeats or skips an item that stayed. Shown on
// policies, one of the lists the reference names (control-plane.md "Pagination"); lists it does not
// name are bare arrays under every version (issue 14 item 3, last test).
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type Envelope<T> = { data: T[]; meta: { hasMore: boolean; nextCursor: string; total: number } };
type ErrorBody = { error: string; code: number; message: string; details?: { field: string }[] };
const V = '2026-04-28';

async function createWorkspaces(t: TestPlatform, names: string[]) {
  for (const name of names) {
    const res = await t.request('/v0/workspaces', { method: 'POST', body: { name } });
    expect(res.status, name).toBe(200);
  }
}

/** Policies named `names`, with extra metadata (displayName, labels) per name. */
async function createPolicies(
  t: TestPlatform,
  names: string[],
  extra: (n: string) => object = () => ({}),
  workspace = 'default',
) {
  for (const name of names) {
    const res = await t.request('/v0/policies', {
      method: 'POST',
      workspace,
      body: {
        metadata: { name, ...extra(name) },
        spec: { type: 'location', locations: [{ name: 'eu', type: 'continent' }] },
      },
    });
    expect(res.status, name).toBe(200);
  }
  return names;
}

const numbered = (count: number, prefix = 'sa') =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);

async function createServiceAccounts(t: TestPlatform, count: number, workspace = 'default') {
  return createPolicies(t, numbered(count), () => ({}), workspace);
}

type Named = { metadata: { name: string } };
const nameOf = (p: Named) => p.metadata.name;

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
      const res = await t.json<unknown[]>('/v0/policies', version ? { version } : {});
      expect(Array.isArray(res.body), String(version)).toBe(true);
      expect(res.body).toHaveLength(55);
    }
    const page = await t.json<Envelope<Named>>('/v0/policies', { version: V });
    expect(Object.keys(page.body).sort()).toEqual(['data', 'meta']);
    expect(page.body.data).toHaveLength(50); // default limit
    expect(page.body.meta).toMatchObject({ hasMore: true, total: 55 });
    expect(page.body.meta.nextCursor).not.toBe('');
    const all = await pageAll<Named>(t, '/v0/policies?limit=7', nameOf);
    expect(all).toHaveLength(55);
    expect(new Set(all).size).toBe(55);
  }, 60_000);

  it('limit: 1 to 200; 0, 201 and non-integers are 400 naming query.limit', async () => {
    await open();
    await createServiceAccounts(t, 3);
    expect((await t.json<Envelope<unknown>>('/v0/policies?limit=200', { version: V })).status).toBe(200);
    const one = await t.json<Envelope<unknown>>('/v0/policies?limit=1', { version: V });
    expect(one.body.data).toHaveLength(1);
    for (const limit of ['0', '201', '2.5', 'ten']) {
      const bad = await t.json<ErrorBody>(`/v0/policies?limit=${limit}`, { version: V });
      expect(bad.status, limit).toBe(400);
      expect(bad.body.details![0]!.field).toBe('query.limit');
    }
  });

  it('sort: createdAt:desc (default), createdAt:asc, name:asc, name:desc', async () => {
    await open();
    const names = ['bravo', 'delta', 'alpha', 'charlie'];
    for (const name of names) {
      await createPolicies(t, [name]);
      now += 1000;
    }
    const order = async (sort?: string) =>
      await pageAll<Named>(t, `/v0/policies?limit=2${sort ? `&sort=${sort}` : ''}`, nameOf);
    expect(await order()).toEqual([...names].reverse());
    expect(await order('createdAt:desc')).toEqual([...names].reverse());
    expect(await order('createdAt:asc')).toEqual(names);
    expect(await order('name:asc')).toEqual([...names].sort());
    expect(await order('name:desc')).toEqual([...names].sort().reverse());
  });

  it('q: case-insensitive substring over name, displayName and labels, ignored under 2 characters; total ignores it', async () => {
    await open();
    await createPolicies(t, ['prod-eu', 'staging'], (name) =>
      name === 'staging' ? { displayName: 'Pre-Production', labels: { team: 'Platform' } } : {},
    );
    await createPolicies(t, ['sandbox'], () => ({ labels: { owner: 'prodigy-team' } }));
    const search = async (q: string) => {
      const res = await t.json<Envelope<Named>>(`/v0/policies?q=${encodeURIComponent(q)}&sort=name:asc`, {
        version: V,
      });
      expect(res.status).toBe(200);
      expect(res.body.meta.total).toBe(3);
      return res.body.data.map(nameOf);
    };
    expect(await search('PROD')).toEqual(['prod-eu', 'sandbox', 'staging']); // name, label, displayName
    expect(await search('platform')).toEqual(['staging']);
    expect(await search('p')).toEqual(['prod-eu', 'sandbox', 'staging']);
    expect(await search(' ')).toHaveLength(3);
    expect(await search('zz')).toEqual([]);
    const tooLong = await t.json<ErrorBody>(`/v0/policies?q=${'x'.repeat(201)}`, { version: V });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.details![0]!.field).toBe('query.q');
  });

  it('total counts the whole workspace, not the page nor other workspaces', async () => {
    await open();
    await createServiceAccounts(t, 4);
    await createWorkspaces(t, ['other']);
    await createServiceAccounts(t, 2, 'other');
    const res = await t.json<Envelope<unknown>>('/v0/policies?limit=1&q=zz-not-there', {
      version: V,
      workspace: 'default',
    });
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.total).toBe(4);
    const other = await t.json<Envelope<unknown>>('/v0/policies?limit=1', {
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
    const first = await t.json<Envelope<unknown>>('/v0/policies?limit=2&sort=name:asc', {
      version: V,
      workspace: 'default',
    });
    const cursor = encodeURIComponent(first.body.meta.nextCursor);
    const next = (query: string, workspace = 'default') =>
      t.json<ErrorBody>(`/v0/policies?${query}`, { version: V, workspace });
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
    // Same binding on another route (agents list) is refused too.
    const otherRoute = await t.json<ErrorBody>(`/v0/agents?limit=2&sort=name:asc&cursor=${cursor}`, {
      version: V,
      workspace: 'default',
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
          const current = (await t.json<Named[]>('/v0/policies')).body.map(nameOf);
          const deleted = new Set<string>();
          const seen: string[] = [];
          let cursor = '';
          let step = 0;
          for (;;) {
            const res = await t.json<Envelope<Named>>(
              `/v0/policies?sort=${sort}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
              { version: V },
            );
            expect(res.status).toBe(200);
            seen.push(...res.body.data.map(nameOf));
            const change = changes[step++ % changes.length]!;
            for (let i = 0; i < change[2]; i++) {
              if (change[0]) {
                now += 1;
                await createPolicies(t, [`new-${counter++}`]);
              } else {
                const remaining = current.filter((id) => !deleted.has(id));
                const victim = remaining[(change[1] + i) % Math.max(remaining.length, 1)];
                if (victim && remaining.length > 6) {
                  deleted.add(victim);
                  await t.request(`/v0/policies/${victim}`, { method: 'DELETE' });
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

  // Issue 14 item 3: the reference names the paginated lists; every other list is a bare array
  // under every version (the vendor SDK maps these bodies as arrays: `data.map`).
  it('lists the reference does not name as paginated are bare arrays, also from 2026-04-28', async () => {
    await open();
    await t.request('/v0/sandboxes', {
      method: 'POST',
      body: { metadata: { name: 'box' }, spec: { runtime: { image: 'base:latest', memory: 512 } } },
    });
    await t.request('/v0/sandboxes/box/previews', {
      method: 'POST',
      body: { metadata: { name: 'web' }, spec: { port: 3000, public: false } },
    });
    for (const path of [
      '/v0/accounts',
      '/v0/workspaces',
      '/v0/users',
      '/v0/service_accounts',
      '/v0/api_keys',
      '/v0/images',
      '/v0/customdomains',
      '/v0/integrations/connections',
      '/v0/sandboxes/box/previews',
      '/v0/sandboxes/box/previews/web/tokens',
    ]) {
      for (const version of [V, '2026-04-16']) {
        const res = await t.json<unknown>(`${path}?limit=1`, { version });
        expect(res.status, `${path} ${version}`).toBe(200);
        expect(Array.isArray(res.body), `${path} ${version}: ${JSON.stringify(res.body)}`).toBe(true);
      }
    }
    for (const path of ['/v0/sandboxes', '/v0/volumes', '/v0/drives', '/v0/agents', '/v0/policies']) {
      const res = await t.json<Envelope<unknown>>(path, { version: V });
      expect(Object.keys(res.body).sort(), path).toEqual(['data', 'meta']);
    }
  });
});
