import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UniqueViolationError } from './errors.js';
import type { Store } from './store.js';
import { testDatabases } from './test-support/databases.js';

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

describe.each(testDatabases(process.env))('identity repositories on $name', (database) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, dispose } = await database.open());
    await store.accounts.create({ id: 'acc1', name: 'acme', createdAt: at(0) });
    await store.principals.create({
      id: 'u1',
      kind: 'user',
      accountId: 'acc1',
      email: 'ann@example.com',
      name: 'Ann Lee',
      description: null,
      clientSecretHash: null,
      createdAt: at(1),
      updatedAt: at(1),
    });
  });
  afterEach(() => dispose());

  const workspace = (name: string, n: number) =>
    store.workspaces.create({
      id: `id-${name}`,
      name,
      accountId: 'acc1',
      displayName: name.toUpperCase(),
      labels: { team: `t-${name}` },
      createdAt: at(n),
      updatedAt: at(n),
      createdBy: 'u1',
      updatedBy: 'u1',
    });

  it('migrates idempotently: opening an existing database again changes nothing', async () => {
    await workspace('alpha', 2);
    expect((await store.workspaces.get('alpha'))?.labels).toEqual({ team: 't-alpha' });
  });

  it('maps duplicate keys to UniqueViolationError', async () => {
    await workspace('alpha', 2);
    await expect(workspace('alpha', 3)).rejects.toBeInstanceOf(UniqueViolationError);
    await expect(
      store.principals.create({
        id: 'u2',
        kind: 'user',
        accountId: 'acc1',
        email: 'ann@example.com',
        name: 'Other',
        description: null,
        clientSecretHash: null,
        createdAt: at(2),
        updatedAt: at(2),
      }),
    ).rejects.toBeInstanceOf(UniqueViolationError);
  });

  it('lists visible workspaces for members and account admins only', async () => {
    await workspace('alpha', 2);
    await workspace('beta', 3);
    const page = { sort: 'name:asc' as const, limit: 10 };
    expect((await store.workspaces.listVisible('u1', page)).items).toEqual([]);
    await store.memberships.upsert('beta', 'u1', 'member');
    expect((await store.workspaces.listVisible('u1', page)).items.map((w) => w.name)).toEqual(['beta']);
    await store.accounts.addAdmin('acc1', 'u1');
    const all = await store.workspaces.listVisible('u1', page);
    expect(all.items.map((w) => w.name)).toEqual(['alpha', 'beta']);
    expect(all.total).toBe(2);
    expect(await store.accounts.listForPrincipal('u1')).toEqual([
      { id: 'acc1', name: 'acme', createdAt: at(0), isAdmin: true },
    ]);
  });

  it('searches names, display names and labels case-insensitively, with LIKE wildcards literal', async () => {
    await workspace('alpha', 2);
    await workspace('beta', 3);
    await store.accounts.addAdmin('acc1', 'u1');
    const find = async (q: string) =>
      (await store.workspaces.listVisible('u1', { sort: 'name:asc', limit: 10, q })).items.map((w) => w.name);
    expect(await find('ALP')).toEqual(['alpha']);
    expect(await find('t-be')).toEqual(['beta']);
    expect(await find('%')).toEqual([]);
  });

  it('memberships: upsert changes the role, counts admins, cascades when the workspace goes', async () => {
    await workspace('alpha', 2);
    await store.memberships.upsert('alpha', 'u1', 'member');
    await store.memberships.upsert('alpha', 'u1', 'admin');
    expect(await store.memberships.get('alpha', 'u1')).toEqual({
      workspace: 'alpha',
      principalId: 'u1',
      accountId: 'acc1',
      role: 'admin',
    });
    expect(await store.memberships.countAdmins('alpha')).toBe(1);
    await store.workspaces.delete('alpha');
    expect(await store.memberships.listForPrincipal('u1')).toEqual([]);
  });

  it('api keys: lookup joins the owner; deleting the owner deletes its keys and tokens', async () => {
    await store.apiKeys.create({
      id: 'k1',
      principalId: 'u1',
      name: 'laptop',
      secretHash: 'h',
      expiresAt: null,
      createdAt: at(2),
      updatedAt: at(2),
    });
    await store.refreshTokens.create({
      id: 'r1',
      principalId: 'u1',
      secretHash: 'h',
      expiresAt: at(100),
      createdAt: at(2),
      revokedAt: null,
      replacedBy: null,
    });
    expect(await store.apiKeys.get('k1')).toMatchObject({ principalKind: 'user', accountId: 'acc1' });
    expect(await store.apiKeys.delete('k1', 'someone-else')).toBe(false);
    await store.principals.delete('u1');
    expect(await store.apiKeys.get('k1')).toBeUndefined();
    expect(await store.refreshTokens.get('r1')).toBeUndefined();
  });

  it("api keys: one lookup also reads the owner's access to a named workspace", async () => {
    await workspace('alpha', 2);
    await workspace('beta', 3);
    await store.apiKeys.create({
      id: 'k1',
      principalId: 'u1',
      name: 'laptop',
      secretHash: 'h',
      expiresAt: null,
      createdAt: at(4),
      updatedAt: at(4),
    });
    const access = async (ws: string) => (await store.apiKeys.getWithWorkspace('k1', ws))?.workspace;
    expect(await store.apiKeys.getWithWorkspace('k1', 'alpha')).toMatchObject({
      id: 'k1',
      secretHash: 'h',
      principalId: 'u1',
      principalKind: 'user',
      accountId: 'acc1',
    });
    expect(await access('nowhere')).toBeUndefined();
    expect(await access('alpha')).toEqual({ accountId: 'acc1', memberRole: undefined, accountAdmin: false });
    await store.memberships.upsert('alpha', 'u1', 'member');
    expect(await access('alpha')).toEqual({ accountId: 'acc1', memberRole: 'member', accountAdmin: false });
    await store.accounts.addAdmin('acc1', 'u1');
    expect(await access('beta')).toEqual({ accountId: 'acc1', memberRole: undefined, accountAdmin: true });
    expect(await access('alpha')).toEqual({ accountId: 'acc1', memberRole: 'member', accountAdmin: true });
    // No key, no row, whatever the workspace: revocation is immediate.
    expect(await store.apiKeys.delete('k1', 'u1')).toBe(true);
    expect(await store.apiKeys.getWithWorkspace('k1', 'alpha')).toBeUndefined();
  });

  it('principals: one lookup also reads their access to a named workspace', async () => {
    await workspace('alpha', 2);
    const access = async (ws: string) => (await store.principals.getWithWorkspace('u1', ws))?.workspace;
    expect(await store.principals.getWithWorkspace('u1', 'alpha')).toMatchObject({
      id: 'u1',
      kind: 'user',
      accountId: 'acc1',
    });
    expect(await access('nowhere')).toBeUndefined();
    expect(await access('alpha')).toEqual({ accountId: 'acc1', memberRole: undefined, accountAdmin: false });
    await store.memberships.upsert('alpha', 'u1', 'admin');
    expect(await access('alpha')).toEqual({ accountId: 'acc1', memberRole: 'admin', accountAdmin: false });
    expect(await store.principals.getWithWorkspace('nobody', 'alpha')).toBeUndefined();
  });

  it('refresh tokens are revoked exactly once', async () => {
    await store.refreshTokens.create({
      id: 'r1',
      principalId: 'u1',
      secretHash: 'h',
      expiresAt: at(100),
      createdAt: at(2),
      revokedAt: null,
      replacedBy: null,
    });
    const results = await Promise.all([
      store.refreshTokens.revoke('r1', at(3)),
      store.refreshTokens.revoke('r1', at(3)),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('transactions roll back every write when one fails', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.accounts.create({ id: 'acc2', name: 'second', createdAt: at(5) });
        await tx.accounts.create({ id: 'acc2', name: 'dup', createdAt: at(5) });
      }),
    ).rejects.toBeInstanceOf(UniqueViolationError);
    expect(await store.accounts.get('acc2')).toBeUndefined();
  });

  it('invitations: pending until accepted or expired', async () => {
    await workspace('alpha', 2);
    await store.invitations.create({
      id: 'i1',
      workspace: 'alpha',
      email: 'bob@example.com',
      role: 'member',
      invitedBy: 'u1',
      tokenHash: 'th',
      expiresAt: at(50),
      createdAt: at(2),
      acceptedAt: null,
    });
    expect((await store.invitations.listPending('alpha', at(10))).map((i) => i.id)).toEqual(['i1']);
    expect(await store.invitations.listPending('alpha', at(60))).toEqual([]);
    await store.invitations.markAccepted('i1', at(11));
    expect(await store.invitations.listPending('alpha', at(12))).toEqual([]);
    expect((await store.invitations.getByTokenHash('th'))?.acceptedAt).toBe(at(11));
  });
});
