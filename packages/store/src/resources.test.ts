import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StaleRevisionError, UniqueViolationError } from './errors.js';
import type { NewResource } from './repositories/resources.js';
import type { Store } from './store.js';
import { testDatabases } from './test-support/databases.js';

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString();

describe.each(testDatabases(process.env))('resources repository on $name', (database) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let seq = 0;

  beforeEach(async () => {
    ({ store, dispose } = await database.open());
    await store.accounts.create({ id: 'acc1', name: 'acme', createdAt: at(0) });
    for (const name of ['ws1', 'ws2']) {
      await store.workspaces.create({
        id: `id-${name}`,
        name,
        accountId: 'acc1',
        displayName: null,
        labels: {},
        createdAt: at(0),
        updatedAt: at(0),
        createdBy: 'u',
        updatedBy: 'u',
      });
    }
  });
  afterEach(() => dispose());

  const resource = (name: string, overrides: Partial<NewResource> = {}): NewResource => {
    seq += 1;
    return {
      id: `r-${String(seq).padStart(6, '0')}`,
      workspace: 'ws1',
      kind: 'sandbox',
      parent: '',
      name,
      displayName: null,
      externalId: null,
      labels: {},
      spec: { runtime: { memory: 2048 } },
      status: 'DEPLOYING',
      state: null,
      system: {},
      events: [],
      createdAt: at(seq),
      updatedAt: at(seq),
      createdBy: 'u',
      updatedBy: 'u',
      terminatedAt: null,
      ...overrides,
    };
  };

  it('round-trips the envelope, JSON columns decoded', async () => {
    await store.resources.create(resource('a', { labels: { env: 'prod' }, externalId: 'ext-1' }));
    const row = await store.resources.get('ws1', 'sandbox', 'a');
    expect(row).toMatchObject({
      name: 'a',
      labels: { env: 'prod' },
      spec: { runtime: { memory: 2048 } },
      revision: 1,
    });
    expect((await store.resources.getByExternalId('ws1', 'sandbox', 'ext-1'))?.name).toBe('a');
    expect(await store.resources.get('ws2', 'sandbox', 'a')).toBeUndefined();
  });

  it('names are unique per workspace, kind and parent', async () => {
    await store.resources.create(resource('a'));
    await expect(store.resources.create(resource('a'))).rejects.toBeInstanceOf(UniqueViolationError);
    await store.resources.create(resource('a', { workspace: 'ws2' }));
    await store.resources.create(resource('a', { kind: 'agent' }));
    await store.resources.create(resource('a', { kind: 'preview', parent: 'sbx' }));
  });

  it('updates bump the revision and refuse a stale expected revision', async () => {
    const created = await store.resources.create(resource('a'));
    const updated = await store.resources.update(created.id, { status: 'DEPLOYED' }, 1);
    expect(updated.revision).toBe(2);
    await expect(store.resources.update(created.id, { status: 'FAILED' }, 1)).rejects.toBeInstanceOf(
      StaleRevisionError,
    );
    expect((await store.resources.getById(created.id))?.status).toBe('DEPLOYED');
  });

  it('hides terminated resources unless asked, and purges them after retention', async () => {
    const a = await store.resources.create(resource('a'));
    await store.resources.create(resource('b'));
    await store.resources.update(a.id, { status: 'TERMINATED', terminatedAt: at(100) });
    const page = { sort: 'name:asc' as const, limit: 10 };
    expect((await store.resources.list('ws1', 'sandbox', page)).items.map((r) => r.name)).toEqual(['b']);
    const all = await store.resources.list('ws1', 'sandbox', page, { includeTerminated: true });
    expect(all.items.map((r) => r.name)).toEqual(['a', 'b']);
    expect(await store.resources.purgeTerminated('sandbox', at(50))).toBe(0);
    expect(await store.resources.purgeTerminated('sandbox', at(101))).toBe(1);
  });

  it('filters by status and search while total counts the whole workspace', async () => {
    await store.resources.create(resource('web-1', { status: 'DEPLOYED' }));
    await store.resources.create(resource('web-2', { status: 'FAILED', displayName: 'Front_End' }));
    await store.resources.create(resource('db', { status: 'DEPLOYED', labels: { tier: 'data' } }));
    const page = { sort: 'name:asc' as const, limit: 10 };
    const deployed = await store.resources.list('ws1', 'sandbox', page, { status: ['DEPLOYED'] });
    expect(deployed.items.map((r) => r.name)).toEqual(['db', 'web-1']);
    expect(deployed.total).toBe(3);
    const names = async (q: string) =>
      (await store.resources.list('ws1', 'sandbox', { ...page, q })).items.map((r) => r.name);
    expect(await names('front')).toEqual(['web-2']);
    // LIKE wildcards in q are literal characters, in both dialects.
    expect(await names('t_e')).toEqual(['web-2']);
    expect(await names('t%e')).toEqual([]);
    expect(await names('DATA')).toEqual(['db']);
    expect(await names('web_')).toEqual([]);
  });

  it('keeps only the newest events', async () => {
    const events = Array.from({ length: 130 }, (_, i) => ({
      type: 'x',
      status: 'DEPLOYED',
      message: `e${i}`,
      revision: '',
      canaryRevision: '',
      time: at(i),
    }));
    const a = await store.resources.create(resource('a', { events }));
    const row = await store.resources.getById(a.id);
    expect(row?.events).toHaveLength(100);
    expect(row?.events[0]?.message).toBe('e30');
  });

  it('pages never repeat or skip an item that exists throughout, under inserts and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('createdAt:desc', 'createdAt:asc', 'name:asc', 'name:desc' as const),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 12 }),
        async (sort, limit, churn) => {
          const workspace = `ws1`;
          const kind = `k${(seq += 1)}`;
          const stable: string[] = [];
          for (let i = 0; i < 15; i += 1) {
            const r = await store.resources.create(resource(`s-${i}-${seq}`, { kind, workspace }));
            stable.push(r.name);
          }
          const transient: string[] = [];
          const seen: string[] = [];
          let after: { key: string; id: string } | undefined;
          for (let round = 0; round < 100; round += 1) {
            const page = await store.resources.list(workspace, kind, { sort, limit, after });
            seen.push(...page.items.map((r) => r.name));
            // Churn between pages: add new items or delete earlier transient ones.
            const add = churn[round % churn.length];
            if (add) {
              const r = await store.resources.create(resource(`t-${round}-${seq}`, { kind, workspace }));
              transient.push(r.id);
            } else if (transient.length > 0) {
              await store.resources.delete(transient.shift()!);
            }
            if (!page.hasMore) break;
            after = page.last;
          }
          const stableSeen = seen.filter((n) => stable.includes(n));
          expect(new Set(stableSeen).size).toBe(stableSeen.length);
          expect([...stableSeen].sort()).toEqual([...stable].sort());
        },
      ),
      { numRuns: 8 },
    );
  });
});
