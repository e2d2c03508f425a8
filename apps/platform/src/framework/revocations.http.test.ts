// Issue 19 items 8 and 10: every way a credential stops being valid publishes a revocation notice
// (and deleting a workspace a workspace notice too), so the sandbox plane's access cache and open
// sessions drop it at once. The real app over a real store; only the ChangeFeed is observed.
import { describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases } from '../test-support/harness.js';
import { ChangeFeed, type ResourceRef } from './change-feed.js';
import { REVOCATION_KIND } from './revocations.js';
import { WORKSPACE_KIND } from './workspace-deletion.js';

const db = testDatabases(process.env)[0]!;

async function platform() {
  const feed = new ChangeFeed();
  const heard: ResourceRef[] = [];
  feed.subscribe(REVOCATION_KIND, (r) => heard.push(r));
  feed.subscribe(WORKSPACE_KIND, (r) => heard.push(r));
  const t = await openTestPlatform(db, { deps: (d) => ({ ...d, changeFeed: feed }) });
  return { t, heard };
}

describe('revocation notices', () => {
  it('deleting an API key', async () => {
    const { t, heard } = await platform();
    try {
      const { body } = await t.json<{ id: string }>('/v0/api_keys', { method: 'POST', body: { name: 'k' } });
      expect(heard).toEqual([]);
      expect((await t.request(`/v0/api_keys/${body.id}`, { method: 'DELETE' })).status).toBe(200);
      expect(heard).toEqual([{ workspace: '', kind: REVOCATION_KIND, name: t.adminId }]);
    } finally {
      await t.dispose();
    }
  });

  it('deleting a service account', async () => {
    const { t, heard } = await platform();
    try {
      const { body } = await t.json<{ client_id: string }>('/v0/service_accounts', {
        method: 'POST',
        body: { name: 'bot' },
      });
      expect((await t.request(`/v0/service_accounts/${body.client_id}`, { method: 'DELETE' })).status).toBe(
        200,
      );
      expect(heard).toEqual([{ workspace: '', kind: REVOCATION_KIND, name: body.client_id }]);
    } finally {
      await t.dispose();
    }
  });

  it('removing a member from a workspace', async () => {
    const { t, heard } = await platform();
    try {
      const member = await t.addUser({ role: 'member' });
      expect((await t.request(`/v0/users/${member.userId}`, { method: 'DELETE' })).status).toBe(200);
      expect(heard).toEqual([{ workspace: t.workspace, kind: REVOCATION_KIND, name: member.userId }]);
    } finally {
      await t.dispose();
    }
  });

  it('a refresh token presented twice revokes all of its principal’s refresh tokens', async () => {
    const { t, heard } = await platform();
    try {
      const { body: sa } = await t.json<{ client_id: string; client_secret: string }>(
        '/v0/service_accounts',
        {
          method: 'POST',
          body: { name: 'bot' },
        },
      );
      const basic = `Basic ${Buffer.from(`${sa.client_id}:${sa.client_secret}`).toString('base64')}`;
      const issued = await t.json<{ refresh_token: string }>('/oauth/token', {
        key: null,
        method: 'POST',
        headers: { authorization: basic },
        body: { grant_type: 'client_credentials' },
      });
      const refresh = { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token };
      expect((await t.request('/oauth/token', { key: null, method: 'POST', body: refresh })).status).toBe(
        200,
      );
      expect(heard).toEqual([]);
      expect((await t.request('/oauth/token', { key: null, method: 'POST', body: refresh })).status).toBe(
        400,
      );
      expect(heard).toEqual([{ workspace: '', kind: REVOCATION_KIND, name: sa.client_id }]);
    } finally {
      await t.dispose();
    }
  });

  it('deleting a workspace: a workspace notice and everyone’s access there', async () => {
    const { t, heard } = await platform();
    try {
      expect((await t.request('/v0/workspaces', { method: 'POST', body: { name: 'gone' } })).status).toBe(
        200,
      );
      expect((await t.request('/v0/workspaces/gone', { method: 'DELETE' })).status).toBe(200);
      expect(heard).toEqual([
        { workspace: 'gone', kind: WORKSPACE_KIND, name: 'gone' },
        { workspace: 'gone', kind: REVOCATION_KIND, name: '' },
      ]);
    } finally {
      await t.dispose();
    }
  });
});
