// Issue "Platform core" §4: bearer tokens (API keys, JWTs from /oauth/token verified with the JWKS),
// header aliases, workspace selection, and 404 for workspaces the caller cannot see.
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
interface Token {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
}
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function serviceAccount(t: TestPlatform, role: 'admin' | 'member' = 'member') {
  const { status, body } = await t.json<{ client_id: string; client_secret: string }>(
    '/v0/service_accounts',
    { method: 'POST', body: { name: 'robot', role } },
  );
  expect(status).toBe(200);
  return body;
}

describe.each(testDatabases(process.env))('authentication and workspaces on $name', (db) => {
  let t: Platform;
  let now = Date.now();
  afterEach(async () => {
    // Dispose once: a test that failed before opening its platform must not dispose the last one again.
    const opened = t;
    t = undefined as unknown as Platform;
    await opened?.dispose();
  });
  const open = async (ttl?: number) => {
    now = Date.now();
    t = await openTestPlatform(db, { now: () => now, ...(ttl ? { accessTokenTtlSeconds: ttl } : {}) });
    return t;
  };

  it('accepts the key in Authorization, X-Service-Authorization and X-Blaxel-Authorization, any case', async () => {
    await open();
    for (const name of ['Authorization', 'x-service-authorization', 'X-BLAXEL-AUTHORIZATION']) {
      const res = await t.request('/v0/workspaces', {
        key: null,
        headers: { [name]: `Bearer ${t.adminKey}` },
      });
      expect(res.status, name).toBe(200);
    }
    expect(
      (await t.request('/v0/workspaces', { key: null, headers: { authorization: `bearer ${t.adminKey}` } }))
        .status,
    ).toBe(200);
  });

  it('answers 401 in the error shape without a token, with a wrong or unknown key', async () => {
    await open();
    const [prefix] = t.adminKey.split('.');
    for (const key of [null, 'nonsense', `${prefix}.wrongsecret`, 'ak_doesnotexist.secret', 'a.b.c']) {
      const { status, body, headers } = await t.json<Record<string, unknown>>('/v0/workspaces', { key });
      expect(status, String(key)).toBe(401);
      expect(body).toMatchObject({ error: 'unauthorized', code: 401 });
      expect(typeof body.message).toBe('string');
      expect(headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('API keys are random, shown once, stored hashed, prefixed, and revocable at once', async () => {
    await open();
    const created = await t.json<{ id: string; apiKey: string; sub: string; sub_type: string }>(
      '/v0/api_keys',
      {
        method: 'POST',
        body: { name: 'laptop' },
      },
    );
    expect(created.status).toBe(200);
    const { id, apiKey } = created.body;
    expect(id).toMatch(/^ak_[a-z0-9]{16}$/);
    expect(apiKey.startsWith(`${id}.`)).toBe(true);
    expect(apiKey.length).toBeGreaterThan(id.length + 40);
    expect(created.body).toMatchObject({ sub: t.adminId, sub_type: 'user' });
    const row = await t.store.apiKeys.get(id);
    expect(row?.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(apiKey.split('.')[1]);
    const listed = await t.json<{ id: string; apiKey?: string }[]>('/v0/api_keys');
    expect(listed.body.find((k) => k.id === id)).toBeDefined();
    expect(listed.body.every((k) => k.apiKey === undefined)).toBe(true);
    expect((await t.request('/v0/workspaces', { key: apiKey })).status).toBe(200);
    // Naming a workspace takes the joined key + access lookup: revocation cuts it at once too.
    expect((await t.request('/v0/users', { key: apiKey, workspace: 'default' })).status).toBe(200);
    expect((await t.request(`/v0/api_keys/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.request('/v0/workspaces', { key: apiKey })).status).toBe(401);
    expect((await t.request('/v0/users', { key: apiKey, workspace: 'default' })).status).toBe(401);
    expect((await t.request(`/v0/api_keys/${id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('an API key with expires_in stops working when it expires', async () => {
    await open();
    const { body } = await t.json<{ apiKey: string; expiresAt: string; expires_in: string }>('/v0/api_keys', {
      method: 'POST',
      body: { name: 'short', expires_in: '1h' },
    });
    expect(body.expires_in).toBe('1h');
    expect(Date.parse(body.expiresAt) - now).toBe(3_600_000);
    expect((await t.request('/v0/workspaces', { key: body.apiKey })).status).toBe(200);
    now += 3_600_000;
    expect((await t.request('/v0/workspaces', { key: body.apiKey })).status).toBe(401);
    const bad = await t.json<{ details: { field: string }[] }>('/v0/api_keys', {
      method: 'POST',
      body: { expires_in: '11y' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.field).toBe('body.expires_in');
  });

  it('client_credentials with HTTP Basic issues a JWT that the JWKS verifies, and refresh rotates', async () => {
    await open();
    const sa = await serviceAccount(t);
    const issued = await t.json<Token>('/oauth/token', {
      key: null,
      method: 'POST',
      headers: { authorization: basic(sa.client_id, sa.client_secret) },
      body: { grant_type: 'client_credentials' },
    });
    expect(issued.status).toBe(200);
    expect(issued.body.token_type).toBe('Bearer');
    expect(issued.body.expires_in).toBe(900);
    const jwks = await t.json<{ keys: Record<string, unknown>[] }>('/.well-known/jwks.json', { key: null });
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0]).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(
      issued.body.access_token,
      createLocalJWKSet(jwks.body as never),
      { currentDate: new Date(now) },
    );
    expect(payload.sub).toBe(sa.client_id);
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.exp! - payload.iat!).toBe(900);

    // The JWT authenticates like an API key; its single workspace is implied.
    const users = await t.request('/v0/service_accounts', { key: issued.body.access_token });
    expect(users.status).toBe(200);

    // Form-encoded refresh (RFC 6749 §6) rotates: the old refresh token then fails.
    const refreshed = await t.json<Token>('/oauth/token', {
      key: null,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(issued.body.refresh_token)}`,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(issued.body.refresh_token);
    const reused = await t.json<{ error: string }>('/oauth/token', {
      key: null,
      method: 'POST',
      body: { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token },
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });

  it('the token endpoint rejects a wrong secret (401 invalid_client) and a missing grant_type (400)', async () => {
    await open();
    const sa = await serviceAccount(t);
    const wrong = await t.json<{ error: string }>('/oauth/token', {
      key: null,
      method: 'POST',
      headers: { authorization: basic(sa.client_id, 'nope') },
      body: { grant_type: 'client_credentials' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const noGrant = await t.json<{ error: string; message: string }>('/oauth/token', {
      key: null,
      method: 'POST',
      headers: { authorization: basic(sa.client_id, sa.client_secret) },
      body: {},
    });
    expect(noGrant.status).toBe(400);
    expect(JSON.stringify(noGrant.body)).toContain('grant_type');
  });

  it('malformed Basic credentials are invalid_client at the token endpoint and harmless elsewhere', async () => {
    await open();
    for (const header of [
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      basic('%zz', 'x'),
      'Basic !!!',
    ]) {
      const res = await t.json<{ error: string }>('/oauth/token', {
        key: null,
        method: 'POST',
        headers: { authorization: header },
        body: { grant_type: 'client_credentials' },
      });
      expect(res.status, header).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect((await t.request('/health', { key: null, headers: { authorization: header } })).status).toBe(
        200,
      );
    }
  });

  it('JWTs expire, and stop working when their service account is deleted', async () => {
    await open(60);
    const sa = await serviceAccount(t);
    const token = async () =>
      (
        await t.json<Token>('/oauth/token', {
          key: null,
          method: 'POST',
          headers: { authorization: basic(sa.client_id, sa.client_secret) },
          body: { grant_type: 'client_credentials' },
        })
      ).body.access_token;
    const first = await token();
    expect((await t.request('/v0/service_accounts', { key: first })).status).toBe(200);
    now += 61_000;
    expect((await t.request('/v0/service_accounts', { key: first })).status).toBe(401);
    const second = await token();
    expect((await t.request('/v0/service_accounts', { key: second })).status).toBe(200);
    expect((await t.request(`/v0/service_accounts/${sa.client_id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.request('/v0/service_accounts', { key: second })).status).toBe(401);
    // A tampered JWT is refused.
    const [h, p] = second.split('.');
    expect((await t.request('/v0/workspaces', { key: `${h}.${p}.AAAA` })).status).toBe(401);
  });

  it('service-account API keys authenticate as the service account', async () => {
    await open();
    const sa = await serviceAccount(t, 'member');
    const key = await t.json<{ id: string; apiKey: string; sub_type: string }>(
      `/v0/service_accounts/${sa.client_id}/api_keys`,
      { method: 'POST', body: { name: 'ci', expires_in: '30d' } },
    );
    expect(key.status).toBe(200);
    expect(key.body.sub_type).toBe('service_account');
    const own = await t.json<{ id: string; sub: string }[]>('/v0/api_keys', { key: key.body.apiKey });
    expect(own.body.map((k) => k.id)).toEqual([key.body.id]);
    // A member cannot create service accounts (403).
    const forbidden = await t.json<{ error: string }>('/v0/service_accounts', {
      key: key.body.apiKey,
      method: 'POST',
      body: { name: 'x' },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');
    const listed = await t.json<{ id: string }[]>(`/v0/service_accounts/${sa.client_id}/api_keys`);
    expect(listed.body.map((k) => k.id)).toEqual([key.body.id]);
    const revoked = await t.request(`/v0/service_accounts/${sa.client_id}/api_keys/${key.body.id}`, {
      method: 'DELETE',
    });
    expect(revoked.status).toBe(200);
    expect((await t.request('/v0/api_keys', { key: key.body.apiKey })).status).toBe(401);
  });

  it('chooses the workspace by query, X-Service-Workspace or X-Blaxel-Workspace; one workspace may be omitted', async () => {
    await open();
    const sa = await serviceAccount(t); // in `default`, the admin's only workspace so far
    const created = await t.request('/v0/workspaces', { method: 'POST', body: { name: 'second' } });
    expect(created.status).toBe(200);
    const inDefault = await t.json<{ client_id: string }[]>('/v0/service_accounts', { workspace: 'default' });
    expect(inDefault.body.map((s) => s.client_id)).toEqual([sa.client_id]);
    for (const header of ['X-Service-Workspace', 'x-blaxel-workspace']) {
      const inSecond = await t.json<unknown[]>('/v0/service_accounts', { headers: { [header]: 'second' } });
      expect(inSecond.status, header).toBe(200);
      expect(inSecond.body).toEqual([]);
    }
    // Several workspaces and none named: 400 naming the parameter.
    const ambiguous = await t.json<{ error: string; message: string }>('/v0/service_accounts');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error).toBe('workspace_required');
    expect(ambiguous.body.message).toContain('workspace');
    // A member of exactly one workspace may omit it.
    const member = await t.addUser({ workspace: 'second' });
    expect((await t.request('/v0/users', { key: member.apiKey })).status).toBe(200);
  });

  it('a workspace of another account, or one the caller is not in, is 404 as if it did not exist', async () => {
    await open();
    const other = await t.addAccount({ workspace: 'elsewhere' });
    const missing = await t.json<{ error: string; message: string }>('/v0/users', { workspace: 'nosuchws' });
    const hidden = await t.json<{ error: string; message: string }>('/v0/users', { workspace: 'elsewhere' });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body.message.replace('elsewhere', 'X')).toBe(missing.body.message.replace('nosuchws', 'X'));
    expect((await t.request('/v0/workspaces/elsewhere')).status).toBe(404);
    expect((await t.request('/v0/workspaces/elsewhere', { method: 'DELETE' })).status).toBe(404);
    expect((await t.request('/v0/workspaces/default', { key: other.apiKey })).status).toBe(404);
    // A plain member of `default` cannot see a sibling workspace of the same account.
    await t.request('/v0/workspaces', { method: 'POST', body: { name: 'private' } });
    const member = await t.addUser({ workspace: 'default' });
    expect((await t.request('/v0/workspaces/private', { key: member.apiKey })).status).toBe(404);
    expect((await t.request('/v0/users?workspace=private', { key: member.apiKey })).status).toBe(404);
    const visible = await t.json<{ name: string }[]>('/v0/workspaces', { key: member.apiKey });
    expect(visible.body.map((w) => w.name)).toEqual(['default']);
    // An account admin acts as admin of a workspace of the account without being a member of it.
    expect(await t.store.memberships.remove('private', t.adminId)).toBe(true);
    const invited = await t.request('/v0/users', {
      workspace: 'private',
      method: 'POST',
      body: { email: 'new@example.com' },
    });
    expect(invited.status).toBe(200);
  });
});
