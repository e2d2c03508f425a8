import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewResource } from './repositories/resources.js';
import type { Store } from './store.js';
import { testDatabases } from './test-support/databases.js';

// `meta.total` comes from trigger-kept counters (migration 003): they must stay exact whoever
// inserts or deletes — the repository, a purge, a raw insert, a workspace's cascade.
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString();

describe.each(testDatabases(process.env))('resource counters on $name', (database) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let seq = 0;
  const total = async (kind = 'sandbox', parent = '') =>
    (await store.resources.list('ws1', kind, { sort: 'createdAt:desc', limit: 1 }, { parent })).total;

  beforeEach(async () => {
    ({ store, dispose } = await database.open());
    await store.accounts.create({ id: 'acc1', name: 'acme', createdAt: at(0) });
    await store.workspaces.create({
      id: 'id-ws1',
      name: 'ws1',
      accountId: 'acc1',
      displayName: null,
      labels: {},
      createdAt: at(0),
      updatedAt: at(0),
      createdBy: 'u',
      updatedBy: 'u',
    });
  });
  afterEach(() => dispose());

  const resource = (name: string, overrides: Partial<NewResource> = {}): NewResource => {
    seq += 1;
    return {
      id: `c-${seq}`,
      workspace: 'ws1',
      kind: 'sandbox',
      parent: '',
      name,
      displayName: null,
      externalId: null,
      labels: {},
      spec: {},
      status: 'DEPLOYED',
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

  it('counts inserts and deletes per (workspace, kind, parent), terminated included', async () => {
    expect(await total()).toBe(0);
    const a = await store.resources.create(resource('a'));
    await store.resources.create(resource('b', { terminatedAt: at(1) }));
    await store.resources.create(resource('p', { kind: 'preview', parent: 'a' }));
    expect(await total()).toBe(2);
    expect(await total('preview', 'a')).toBe(1);
    await store.resources.delete(a.id);
    expect(await total()).toBe(1);
    expect(await store.resources.purgeTerminated('sandbox', at(10_000))).toBe(1);
    expect(await total()).toBe(0);
    expect(await total('preview', 'a')).toBe(1);
  });

  it('stays exact for a failed duplicate insert and a workspace deleted with its resources', async () => {
    await store.resources.create(resource('a'));
    await expect(store.resources.create(resource('a'))).rejects.toThrow();
    expect(await total()).toBe(1);
    await store.workspaces.delete('ws1');
    const rows = await store.db.selectFrom('resource_counts').selectAll().execute();
    expect(rows).toEqual([]);
  });
});
