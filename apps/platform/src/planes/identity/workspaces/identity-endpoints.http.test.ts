// Issue "Platform core" §4 endpoints with the shapes of reference control-plane.md §1.13-1.14:
// accounts, workspaces, users (invite, role, remove), service accounts.
import {
  accountSchema,
  apiKeySchema,
  pendingInvitationSchema,
  serviceAccountSchema,
  serviceAccountWithSecretSchema,
  workspaceSchema,
  workspaceUserSchema,
} from '@tarmac/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type ErrorBody = { error: string; code: number; message: string; details?: { field: string }[] };

describe.each(testDatabases(process.env))('identity endpoints on $name', (db) => {
  let t: Platform;
  afterEach(async () => {
    // Dispose once: a test that failed before opening its platform must not dispose the last one again.
    const opened = t;
    t = undefined as unknown as Platform;
    await opened?.dispose();
  });

  it('GET /v0/accounts lists the caller’s account and whether they administer it', async () => {
    t = await openTestPlatform(db);
    const admin = await t.json<unknown[]>('/v0/accounts');
    expect(admin.status).toBe(200);
    expect(admin.body).toHaveLength(1);
    expect(accountSchema.parse(admin.body[0])).toMatchObject({ id: t.accountId, isAdmin: true });
    const member = await t.addUser({});
    const seen = await t.json<{ id: string; isAdmin: boolean }[]>('/v0/accounts', { key: member.apiKey });
    expect(seen.body).toEqual([expect.objectContaining({ id: t.accountId, isAdmin: false })]);
    const other = await t.addAccount({ workspace: 'theirs' });
    const theirs = await t.json<{ id: string }[]>('/v0/accounts', { key: other.apiKey });
    expect(theirs.body.map((a) => a.id)).toEqual([other.accountId]);
    // Not among the reference's paginated lists: a bare array from 2026-04-28 too (issue 14 item 3).
    const latest = await t.json<unknown[]>('/v0/accounts', { version: '2026-04-28' });
    expect(latest.body).toHaveLength(1);
  });

  it('workspaces: create (account admins; caller becomes admin), get, update, immutable name, delete', async () => {
    t = await openTestPlatform(db);
    const created = await t.json<Record<string, unknown>>('/v0/workspaces', {
      method: 'POST',
      body: { name: 'research', displayName: 'Research', labels: { team: 'ml' } },
    });
    expect(created.status).toBe(200);
    expect(workspaceSchema.parse(created.body)).toMatchObject({
      name: 'research',
      displayName: 'Research',
      labels: { team: 'ml' },
      accountId: t.accountId,
      createdBy: t.adminId,
      role: 'admin',
    });
    expect((await t.json('/v0/workspaces/research')).body).toEqual(created.body);
    const updated = await t.json<{ displayName: string; labels: object; updatedAt: string }>(
      '/v0/workspaces/research',
      {
        method: 'PUT',
        body: { name: 'research', displayName: 'R&D', labels: { team: 'ai' } },
      },
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ displayName: 'R&D', labels: { team: 'ai' } });
    const rename = await t.json<ErrorBody>('/v0/workspaces/research', {
      method: 'PUT',
      body: { name: 'renamed' },
    });
    expect(rename.status).toBe(400);
    expect(rename.body.details![0]!.field).toBe('body.name');
    const reserved = await t.json<ErrorBody>('/v0/workspaces', { method: 'POST', body: { name: 'api' } });
    expect([400, 409]).toContain(reserved.status);

    // Members cannot create, update or delete.
    const member = await t.addUser({ workspace: 'research', role: 'member' });
    expect(
      (await t.request('/v0/workspaces', { key: member.apiKey, method: 'POST', body: { name: 'x1' } }))
        .status,
    ).toBe(403);
    expect(
      (
        await t.request('/v0/workspaces/research', {
          key: member.apiKey,
          method: 'PUT',
          body: { displayName: 'no' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.request('/v0/workspaces/research', { key: member.apiKey, method: 'DELETE' })).status,
    ).toBe(403);
    expect(
      (await t.json<{ role: string }>('/v0/workspaces/research', { key: member.apiKey })).body.role,
    ).toBe('member');

    const deleted = await t.json<{ name: string }>('/v0/workspaces/research', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.name).toBe('research');
    expect((await t.request('/v0/workspaces/research')).status).toBe(404);
    expect((await t.request('/v0/users', { key: member.apiKey })).status).toBe(404);
  });

  it('account admins administer every workspace of their account, member or not', async () => {
    t = await openTestPlatform(db);
    expect((await t.request('/v0/workspaces', { method: 'POST', body: { name: 'team' } })).status).toBe(200);
    const lead = await t.addUser({ workspace: 'team', role: 'admin' });
    // The account admin leaves the workspace's member list; the lead stays its admin.
    expect((await t.request(`/v0/users/${t.adminId}`, { method: 'DELETE', workspace: 'team' })).status).toBe(
      200,
    );
    const members = await t.json<{ sub: string }[]>('/v0/users', { workspace: 'team' });
    expect(members.status).toBe(200);
    expect(members.body.map((u) => u.sub)).toEqual([lead.userId]);
    expect((await t.json<{ role: string }>('/v0/workspaces/team')).body.role).toBe('admin');
    const invited = await t.request('/v0/users', {
      method: 'POST',
      workspace: 'team',
      body: { email: 'x@example.com' },
    });
    expect(invited.status).toBe(200);
    // The workspace admin who is not an account admin cannot create workspaces.
    expect(
      (await t.request('/v0/workspaces', { key: lead.apiKey, method: 'POST', body: { name: 'mine' } }))
        .status,
    ).toBe(403);
  });

  it('users: invite by email (token shown once), accept for an API key, change role, remove; one admin stays', async () => {
    t = await openTestPlatform(db);
    const invited = await t.json<Record<string, unknown>>('/v0/users', {
      method: 'POST',
      body: { email: 'Ada@Example.com', role: 'member' },
    });
    expect(invited.status).toBe(200);
    const invitation = pendingInvitationSchema.parse(invited.body);
    expect(invitation).toMatchObject({
      email: 'ada@example.com',
      role: 'member',
      workspace: 'default',
      accepted: false,
    });
    expect(invitation.invitedBy).toBe(t.adminId);
    const accepted = await t.json<{ sub: string; apiKey: { apiKey: string } }>('/v0/invitations/accept', {
      key: null,
      method: 'POST',
      body: { token: invitation.invitationToken, name: 'Ada Lovelace' },
    });
    expect(accepted.status).toBe(200);
    expect(apiKeySchema.parse(accepted.body.apiKey).apiKey).toMatch(/^ak_/);
    const again = await t.request('/v0/invitations/accept', {
      key: null,
      method: 'POST',
      body: { token: invitation.invitationToken },
    });
    expect(again.status).toBe(409);

    const users = await t.json<Record<string, unknown>[]>('/v0/users');
    expect(users.body).toHaveLength(2);
    const ada = workspaceUserSchema.parse(users.body.find((u) => u.email === 'ada@example.com'));
    expect(ada).toMatchObject({
      sub: accepted.body.sub,
      given_name: 'Ada',
      family_name: 'Lovelace',
      role: 'member',
    });

    // Ada (member) cannot invite; the admin promotes her by email, then by sub demotes.
    const adaKey = accepted.body.apiKey.apiKey;
    expect(
      (await t.request('/v0/users', { key: adaKey, method: 'POST', body: { email: 'b@example.com' } }))
        .status,
    ).toBe(403);
    const promoted = await t.json<{ role: string }>('/v0/users/ada@example.com', {
      method: 'PUT',
      body: { role: 'admin' },
    });
    expect(promoted.body.role).toBe('admin');
    expect(
      (await t.request('/v0/users', { key: adaKey, method: 'POST', body: { email: 'b@example.com' } }))
        .status,
    ).toBe(200);
    const badRole = await t.json<ErrorBody>(`/v0/users/${accepted.body.sub}`, {
      method: 'PUT',
      body: { role: 'owner' },
    });
    expect(badRole.status).toBe(400);
    expect(badRole.body.details![0]!.field).toBe('body.role');
    const badEmail = await t.json<ErrorBody>('/v0/users', {
      method: 'POST',
      body: { email: 'not-an-email' },
    });
    expect(badEmail.body.details![0]!.field).toBe('body.email');

    // Removing: the pending invitation of b@, then Ada; the last admin cannot be demoted or removed.
    expect((await t.request('/v0/users/b@example.com', { method: 'DELETE' })).status).toBe(200);
    expect((await t.request(`/v0/users/${accepted.body.sub}`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.request('/v0/workspaces', { key: adaKey })).status).toBe(200);
    expect((await t.request('/v0/users', { key: adaKey })).status).toBe(404);
    const last = await t.json<ErrorBody>(`/v0/users/${t.adminId}`, {
      method: 'PUT',
      body: { role: 'member' },
    });
    expect(last.status).toBe(409);
    expect((await t.request(`/v0/users/${t.adminId}`, { method: 'DELETE' })).status).toBe(409);
    expect((await t.request('/v0/users/nobody@example.com', { method: 'DELETE' })).status).toBe(404);
  });

  it('an invitation cannot pull a user of another account into the workspace (409)', async () => {
    t = await openTestPlatform(db);
    const other = await t.addAccount({ workspace: 'theirs' });
    const invite = async (key: string, workspace: string) =>
      (
        await t.json<{ invitationToken: string }>('/v0/users', {
          key,
          workspace,
          method: 'POST',
          body: { email: 'eve@example.com' },
        })
      ).body.invitationToken;
    const ours = await invite(t.adminKey, 'default');
    const theirs = await invite(other.apiKey, 'theirs');
    const accept = (token: string) =>
      t.json<ErrorBody>('/v0/invitations/accept', { key: null, method: 'POST', body: { token } });
    expect((await accept(theirs)).status).toBe(200);
    const refused = await accept(ours);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('another account');
    // Eve did not become a member: she is listed only by her still unaccepted invitation.
    const users = await t.json<{ email: string; accepted: boolean }[]>('/v0/users', { workspace: 'default' });
    expect(users.body.filter((u) => u.email === 'eve@example.com')).toEqual([
      expect.objectContaining({ accepted: false, sub: '' }),
    ]);
  });

  it('service accounts: create (secret once), list, update, delete; snake_case shapes of §1.14', async () => {
    t = await openTestPlatform(db);
    const created = await t.json<Record<string, unknown>>('/v0/service_accounts', {
      method: 'POST',
      body: { name: 'deployer', description: 'CI' },
    });
    expect(created.status).toBe(200);
    const sa = serviceAccountWithSecretSchema.parse(created.body);
    expect(Object.keys(created.body).sort()).toEqual(
      ['client_id', 'client_secret', 'created_at', 'description', 'name', 'updated_at'].sort(),
    );
    const listed = await t.json<Record<string, unknown>[]>('/v0/service_accounts');
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).not.toHaveProperty('client_secret');
    expect(serviceAccountSchema.parse(listed.body[0]).client_id).toBe(sa.client_id);
    const updated = await t.json<{ name: string; description: string }>(
      `/v0/service_accounts/${sa.client_id}`,
      {
        method: 'PUT',
        body: { name: 'deployer-2', description: 'CD' },
      },
    );
    expect(updated.body).toMatchObject({ name: 'deployer-2', description: 'CD' });
    const empty = await t.json<ErrorBody>(`/v0/service_accounts/${sa.client_id}`, {
      method: 'PUT',
      body: { name: '' },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.details![0]!.field).toBe('body.name');
    // Not visible from another account.
    const other = await t.addAccount({ workspace: 'theirs' });
    expect(
      (await t.request(`/v0/service_accounts/${sa.client_id}`, { key: other.apiKey, method: 'DELETE' }))
        .status,
    ).toBe(404);
    expect(
      (await t.request(`/v0/service_accounts/${sa.client_id}/api_keys`, { key: other.apiKey })).status,
    ).toBe(404);
    expect((await t.request(`/v0/service_accounts/${sa.client_id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.json<unknown[]>('/v0/service_accounts')).body).toEqual([]);
    expect((await t.request(`/v0/service_accounts/${sa.client_id}`, { method: 'DELETE' })).status).toBe(404);
  });
});
