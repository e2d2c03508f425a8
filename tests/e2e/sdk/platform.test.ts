// Every management method of the SDK against the real platform binary (apps/platform/dist),
// configured the way users configure it: from the credentials.json the platform writes.
import { freePort, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from './fixture.js';
import {
  ConflictError,
  NotFoundError,
  Sandbox,
  Tarmac,
  TarmacConnectionError,
  UnauthorizedError,
  ValidationError,
} from '@tarmac/sdk';
import { createClient } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let platform: RunningPlatform;
let tarmac: Tarmac;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

beforeAll(async () => {
  platform = await startTestPlatform({ bridge: 'tarmacsp0', subnet: '10.240.0.0/16' });
  // Arguments > env > credentials.json: only the file is given, so the file must be enough.
  tarmac = await createClient({ env: {}, home: platform.home });
});
afterAll(async () => {
  expect(await stopTestPlatform(platform)).toEqual([]);
}, 120_000);

describe('configuration', () => {
  it('reads credentials.json, and env overrides it', async () => {
    expect(tarmac.apiUrl).toBe(platform.credentials.apiUrl);
    expect(tarmac.workspace).toBe('default');
    const overridden = await createClient({ env: { TARMAC_WORKSPACE: 'other' }, home: platform.home });
    expect(overridden.workspace).toBe('other');
    const explicit = await createClient({
      env: { TARMAC_WORKSPACE: 'other' },
      home: platform.home,
      workspace: 'x',
    });
    expect(explicit.workspace).toBe('x');
  });
});

describe('platform, accounts and workspaces', () => {
  it('answers health, readiness and JWKS', async () => {
    expect((await tarmac.platform.health()).status).toBe('ok');
    expect((await tarmac.platform.ready()).status).toBe('ok');
    expect((await tarmac.platform.jwks()).keys.length).toBeGreaterThan(0);
  });

  it('lists accounts and runs the workspace lifecycle with typed errors', async () => {
    const [account] = await tarmac.accounts.list().all();
    expect(account?.id).toBe(platform.credentials.accountId);
    const name = unique('ws');
    const created = await tarmac.workspaces.create({ name, displayName: 'Team' });
    expect([created.name, created.role]).toEqual([name, 'admin']);
    await expect(tarmac.workspaces.create({ name })).rejects.toBeInstanceOf(ConflictError);
    expect((await tarmac.workspaces.update(name, { displayName: 'Renamed' })).displayName).toBe('Renamed');
    expect((await tarmac.workspaces.get(name)).displayName).toBe('Renamed');
    const names = (await tarmac.workspaces.list({ sort: 'name:asc' }).all()).map((w) => w.name);
    expect(names).toEqual(expect.arrayContaining(['default', name]));
    await tarmac.workspaces.delete(name);
    const missing = await tarmac.workspaces.get(name).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe('not_found');
  });

  it('reports validation errors with the offending fields', async () => {
    const error = await tarmac.workspaces.create({ name: 'Bad Name!' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details?.map((d) => d.field)).toContainEqual(
      expect.stringMatching(/name$/),
    );
  });
});

describe('users, service accounts and API keys', () => {
  it('invites, changes the role of, and removes a user; an invitation redeems for a key', async () => {
    const email = `${unique('u')}@example.com`;
    const invitation = await tarmac.users.invite({ email });
    expect(invitation.role).toBe('member');
    const accepted = await tarmac.users.acceptInvitation({ token: invitation.invitationToken ?? '' });
    expect(accepted.apiKey.apiKey).toMatch(/^ak_/);
    expect((await tarmac.users.list().all()).map((u) => u.email)).toContain(email);
    const invitee = new Tarmac({
      apiUrl: tarmac.apiUrl,
      apiKey: accepted.apiKey.apiKey,
      workspace: 'default',
    });
    expect((await invitee.workspaces.list().all()).map((w) => w.name)).toEqual(['default']);
    expect((await tarmac.users.updateRole(email, 'admin')).role).toBe('admin');
    await tarmac.users.remove(email);
    expect((await tarmac.users.list().all()).map((u) => u.email)).not.toContain(email);
  });

  it('creates service accounts whose client credentials and API keys authenticate', async () => {
    const sa = await tarmac.serviceAccounts.create({ name: unique('bot'), description: 'ci' });
    expect(sa.client_secret).toBeTruthy();
    expect((await tarmac.serviceAccounts.update(sa.client_id, { description: 'ci2' })).description).toBe(
      'ci2',
    );
    expect((await tarmac.serviceAccounts.list().all()).map((s) => s.client_id)).toContain(sa.client_id);

    const token = await tarmac.platform.clientCredentialsToken(sa.client_id, sa.client_secret);
    expect(token.token_type).toBe('Bearer');
    expect((await tarmac.platform.refreshToken(token.refresh_token)).access_token).toBeTruthy();
    const bot = new Tarmac({ apiUrl: tarmac.apiUrl, clientId: sa.client_id, clientSecret: sa.client_secret });
    expect((await bot.workspaces.list().all()).map((w) => w.name)).toContain('default');
    expect(await bot.token()).not.toBe(sa.client_secret);

    const key = await tarmac.serviceAccounts.createApiKey(sa.client_id, { name: 'deploy', expires_in: '1d' });
    expect((await tarmac.serviceAccounts.listApiKeys(sa.client_id).all()).map((k) => k.id)).toContain(key.id);
    await tarmac.serviceAccounts.deleteApiKey(sa.client_id, key.id);
    await tarmac.serviceAccounts.delete(sa.client_id);
    await expect(bot.withWorkspace('default').workspaces.get('default')).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('creates, lists and revokes the caller’s own API keys', async () => {
    const key = await tarmac.apiKeys.create({ name: unique('k') });
    const withKey = new Tarmac({ apiUrl: tarmac.apiUrl, apiKey: key.apiKey, workspace: 'default' });
    expect((await withKey.workspaces.get('default')).name).toBe('default');
    expect((await tarmac.apiKeys.list().all()).map((k) => k.id)).toContain(key.id);
    await tarmac.apiKeys.delete(key.id);
    await expect(withKey.workspaces.get('default')).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('pagination and retries', () => {
  it('walks every page of a list with for-await, one request per page', async () => {
    // Policies: a list the reference names as paginated (service accounts are a bare array since
    // issue 14 item 3).
    const prefix = unique('page');
    for (let i = 0; i < 5; i++)
      await tarmac.policies.create({
        metadata: { name: `${prefix}-${i}` },
        spec: { type: 'location', locations: [{ name: 'eu', type: 'continent' }] },
      });
    const pages = [];
    for await (const page of tarmac.policies.list({ limit: 2, q: prefix }).pages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([2, 2, 1]);
    const names: string[] = [];
    for await (const policy of tarmac.policies.list({ limit: 2, q: prefix, sort: 'name:asc' }))
      names.push(policy.metadata.name);
    expect(names).toEqual([0, 1, 2, 3, 4].map((i) => `${prefix}-${i}`));
  });

  it('gives up on an unreachable platform with a connection error after retrying', async () => {
    let attempts = 0;
    const counting = (input: string | URL, init?: RequestInit) => {
      attempts++;
      return fetch(input, init);
    };
    const closed = `http://127.0.0.1:${await freePort()}`;
    const dead = new Tarmac({
      apiUrl: closed,
      fetch: counting,
      retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 10 },
    });
    const error = await dead.workspaces
      .list()
      .all()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TarmacConnectionError);
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(attempts).toBe(3);
  });
});

describe('sandboxes, previews, tokens and sessions (management plane)', () => {
  it('creates, gets, lists, re-creates idempotently and deletes a sandbox', async () => {
    const name = unique('sbx');
    const sandbox = await Sandbox.create(
      { name, memory: 256, ports: [3000], envs: { A: '1' }, ttl: '1h' },
      tarmac,
    );
    expect(sandbox.name).toBe(name);
    expect(sandbox.spec.runtime?.ports?.[0]).toMatchObject({ target: 3000, protocol: 'HTTP' });
    // A '-' in the name is doubled in the host label, so no two (name, workspace) pairs share a
    // host (issue 19 item 12).
    expect(sandbox.url).toMatch(new RegExp(`^http://sbx-${name.replace(/-/g, '--')}-default\\.`));
    await expect(Sandbox.create({ name }, tarmac)).rejects.toBeInstanceOf(ConflictError);
    const again = await Sandbox.createIfNotExists({ name }, tarmac);
    expect(again.metadata.createdAt).toBe(sandbox.metadata.createdAt);
    expect((await Sandbox.get(name, tarmac)).spec.runtime?.memory).toBe(256);
    expect((await tarmac.sandboxes.list().all()).map((s) => s.name)).toContain(name);
    expect((await sandbox.refresh()).status).toMatch(/^(DEPLOYING|DEPLOYED|FAILED)$/);
    const deleted = await sandbox.delete();
    expect(deleted.status).toBe('DELETING');
    await expect(sandbox.waitFor('DEPLOYED', { timeoutMs: 5000 })).rejects.toThrow(
      /DELETING|TERMINATED|not found/,
    );
  });

  it('manages previews, preview tokens and sessions', async () => {
    const sandbox = await tarmac.sandboxes.create({ name: unique('pv'), ports: [8000] });
    const preview = await sandbox.previews.create({ name: 'web', port: 8000, public: true });
    expect(preview.spec.url).toMatch(/^http/);
    expect((await sandbox.previews.createIfNotExists({ name: 'web', port: 8000 })).spec.url).toBe(
      preview.spec.url,
    );
    expect((await sandbox.previews.get('web')).spec.port).toBe(8000);
    const priv = await sandbox.previews.create({ name: 'priv', port: 8000, public: false });
    expect(priv.spec.public).toBe(false);
    const token = await sandbox.previews.tokens('priv').create(new Date(Date.now() + 3600_000));
    expect(token.spec.token).toBeTruthy();
    expect((await sandbox.previews.tokens('priv').list()).map((t) => t.metadata.name)).toContain(
      token.metadata.name,
    );
    await sandbox.previews.tokens('priv').delete(token.metadata.name);
    expect(await sandbox.previews.tokens('priv').list()).toEqual([]);
    expect((await sandbox.previews.list()).map((p) => p.metadata.name).sort()).toEqual(['priv', 'web']);

    const session = await sandbox.sessions.create();
    expect([session.url, session.token]).toEqual([expect.stringMatching(/^http/), expect.any(String)]);
    expect((await sandbox.sessions.list()).map((s) => s.name)).toEqual([session.name]);
    await sandbox.sessions.delete(session.name);
    await sandbox.previews.delete('web');
    await sandbox.previews.delete('priv');
    await expect(sandbox.previews.get('web')).rejects.toBeInstanceOf(NotFoundError);
    await sandbox.delete();
  });
});
