// Issue 3 part B: images (tags, share, pending shares), templates, integration connections,
// policies and custom domains over HTTP (in-process), on SQLite and PostgreSQL.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type Json = Record<string, any>;
type ErrorBody = { error: string; message: string; details?: { field: string; message: string }[] };

const connection = (name: string) => ({
  metadata: { name, displayName: 'GitHub' },
  spec: {
    integration: 'github',
    secret: { CLIENT_ID: 'cid', CLIENT_SECRET: 'csecret-xyz', REFRESH_TOKEN: 'rtok-xyz' },
  },
});

describe.each(testDatabases(process.env))('supporting resources on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
  });
  afterEach(async () => t.dispose());

  const register = (resourceType: string, name: string, image: string, workspace?: string) =>
    t.json<Json>('/v0/images', {
      method: 'POST',
      body: { resourceType, name, image, size: 1000 },
      ...(workspace ? { workspace } : {}),
    });

  it('registers images with tags, lists, deletes a tag, refuses to delete an image in use', async () => {
    expect((await register('agents', 'helper', 'ghcr.io/acme/helper:v1')).body).toMatchObject({
      image: 'agents/helper:v1',
    });
    await register('agents', 'helper', 'ghcr.io/acme/helper:v2');
    const image = await t.json<Json>('/v0/images/agents/helper');
    expect(image.body.metadata).toMatchObject({
      name: 'helper',
      resourceType: 'agents',
      workspace: 'default',
      sourceWorkspace: 'default',
      status: 'BUILT',
    });
    expect(image.body.spec.tags.map((tag: Json) => tag.name).sort()).toEqual(['v1', 'v2']);
    expect(image.body.spec.size).toBe(2000);
    expect((await t.json<Json[]>('/v0/images')).body).toHaveLength(1);
    const bad = await t.json<ErrorBody>('/v0/images/widgets/helper');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/resourceType.*agents, functions, sandboxes, jobs/);
    const untagged = await t.json<Json>('/v0/images/agents/helper/tags/v1', { method: 'DELETE' });
    expect(untagged.body.spec.tags.map((tag: Json) => tag.name)).toEqual(['v2']);
    expect((await t.json('/v0/images/agents/helper/tags/v1', { method: 'DELETE' })).status).toBe(404);

    await t.json('/v0/agents', {
      method: 'POST',
      body: { metadata: { name: 'a' }, spec: { runtime: { image: 'agents/helper:v2' } } },
    });
    expect((await t.json('/v0/images/agents/helper', { method: 'DELETE' })).status).toBe(409);
    await t.json('/v0/agents/a', { method: 'DELETE' });
    const deleted = await t.json<Json>('/v0/images/agents/helper', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('helper');
    expect((await t.json('/v0/images/agents/helper')).status).toBe(404);
  });

  it('shares an image within the account at once (200, the image object), 400 for a bad resourceType', async () => {
    await register('jobs', 'runner', 'ghcr.io/acme/runner:1');
    const second = await t.json('/v0/workspaces', { method: 'POST', body: { name: 'second' } });
    expect(second.status).toBe(200);
    const shared = await t.json<Json>('/v0/images/jobs/runner/share', {
      method: 'POST',
      body: { targetWorkspace: 'second' },
      workspace: 'default',
    });
    expect(shared.status).toBe(200);
    expect(shared.body.metadata).toMatchObject({
      name: 'runner',
      resourceType: 'jobs',
      workspace: 'second',
      sourceWorkspace: 'default',
    });
    expect(shared.body.spec.tags[0]).toMatchObject({ name: '1', size: 1000 });
    const there = await t.json<Json>('/v0/images/jobs/runner', { workspace: 'second' });
    expect(there.body.metadata.sourceWorkspace).toBe('default');
    const shares = await t.json<Json[]>('/v0/images/jobs/runner/share', { workspace: 'default' });
    expect(shares.body.map((s) => s.targetWorkspace)).toEqual(['second']);

    const badType = await t.json<ErrorBody>('/v0/images/widgets/runner/share', {
      method: 'POST',
      body: { targetWorkspace: 'second' },
      workspace: 'default',
    });
    expect(badType.status).toBe(400);
    expect(badType.body.details?.[0]?.field).toBe('path.resourceType');
    const noTarget = await t.json<ErrorBody>('/v0/images/jobs/runner/share', {
      method: 'POST',
      body: {},
      workspace: 'default',
    });
    expect(noTarget.body.details?.[0]).toMatchObject({
      field: 'body.targetWorkspace',
      message: 'is required',
    });
    expect(
      (
        await t.json('/v0/images/jobs/runner/share', {
          method: 'POST',
          body: { targetWorkspace: 'nowhere' },
          workspace: 'default',
        })
      ).status,
    ).toBe(404);

    const unshared = await t.json<Json[]>('/v0/images/jobs/runner/share/second', {
      method: 'DELETE',
      workspace: 'default',
    });
    expect(unshared.body).toEqual([]);
    expect((await t.json('/v0/images/jobs/runner', { workspace: 'second' })).status).toBe(404);
  });

  it('shares across accounts through a pending share: targetAccountId required, 202, accept or decline (204)', async () => {
    await register('functions', 'tool', 'ghcr.io/acme/tool:3');
    await register('functions', 'other', 'ghcr.io/acme/other:1');
    const partner = await t.addAccount({ workspace: 'partner' });
    const noAccount = await t.json<ErrorBody>('/v0/images/functions/tool/share', {
      method: 'POST',
      body: { targetWorkspace: 'partner' },
    });
    expect(noAccount.status).toBe(400);
    expect(noAccount.body.details?.[0]?.field).toBe('body.targetAccountId');

    const pending = await t.json<Json>('/v0/images/functions/tool/share', {
      method: 'POST',
      body: { targetWorkspace: 'partner', targetAccountId: partner.accountId },
    });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({
      status: 'pending',
      targetWorkspace: 'partner',
      sourceWorkspace: 'default',
      imageName: 'tool',
    });
    const duplicate = await t.json('/v0/images/functions/tool/share', {
      method: 'POST',
      body: { targetWorkspace: 'partner', targetAccountId: partner.accountId },
    });
    expect(duplicate.status).toBe(409);
    expect((await t.json<Json[]>('/v0/pending-image-shares?direction=outgoing')).body).toHaveLength(1);
    const incoming = await t.json<Json[]>('/v0/pending-image-shares', { key: partner.apiKey });
    expect(incoming.body.map((s) => s.id)).toEqual([pending.body.id]);
    // The source cannot answer its own share; the target can.
    expect(
      (await t.json(`/v0/pending-image-shares/${pending.body.id}/accept`, { method: 'POST' })).status,
    ).toBe(404);
    const accepted = await t.json<Json>(`/v0/pending-image-shares/${pending.body.id}/accept`, {
      method: 'POST',
      key: partner.apiKey,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.metadata).toMatchObject({
      name: 'tool',
      workspace: 'partner',
      sourceWorkspace: 'default',
    });
    expect(
      (
        await t.json(`/v0/pending-image-shares/${pending.body.id}/accept`, {
          method: 'POST',
          key: partner.apiKey,
        })
      ).status,
    ).toBe(409);

    const second = await t.json<Json>('/v0/images/functions/other/share', {
      method: 'POST',
      body: { targetWorkspace: 'partner', targetAccountId: partner.accountId },
    });
    const declined = await t.request(`/v0/pending-image-shares/${second.body.id}/decline`, {
      method: 'POST',
      key: partner.apiKey,
    });
    expect(declined.status).toBe(204);
    expect(await declined.text()).toBe('');
    expect((await t.json('/v0/images/functions/other', { key: partner.apiKey })).status).toBe(404);
    expect((await t.json<Json[]>('/v0/pending-image-shares', { key: partner.apiKey })).body).toEqual([]);
  });

  it('serves the built-in template catalogue read-only', async () => {
    const list = await t.json<Json[]>('/v0/templates');
    expect(list.status).toBe(200);
    const names = list.body.map((x) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'template-agent-typescript',
        'template-agent-python',
        'template-mcp-typescript',
        'template-job-typescript',
        'template-sandbox-base',
      ]),
    );
    const one = await t.json<Json>('/v0/templates/template-agent-python');
    expect(Object.keys(one.body).sort()).toEqual(
      [
        'name',
        'description',
        'defaultBranch',
        'url',
        'sha',
        'icon',
        'iconDark',
        'downloadCount',
        'forksCount',
        'starCount',
        'topics',
        'variables',
      ].sort(),
    );
    expect(one.body.variables[0]).toMatchObject({ name: 'OPENAI_API_KEY', secret: true });
    expect((await t.json('/v0/templates/nope')).status).toBe(404);
    // Read-only: no write route exists.
    expect([404, 405]).toContain((await t.json('/v0/templates', { method: 'POST', body: {} })).status);
  });

  it('masks connection secrets in every response, seals them at rest, 409 on deleting a connection in use', async () => {
    const created = await t.json<Json>('/v0/integrations/connections', {
      method: 'POST',
      body: connection('gh'),
    });
    expect(created.status).toBe(200);
    expect(created.body.spec).toMatchObject({
      integration: 'github',
      secret: { CLIENT_ID: '********', CLIENT_SECRET: '********', REFRESH_TOKEN: '********' },
    });
    for (const res of [
      await t.json<Json>('/v0/integrations/connections/gh'),
      await t.json<Json>('/v0/integrations/connections/gh?show_secrets=true'),
    ]) {
      expect(JSON.stringify(res.body)).not.toMatch(/csecret-xyz|rtok-xyz/);
    }
    const row = await t.store.resources.get<Json>('default', 'integration-connection', 'gh');
    expect(JSON.stringify(row)).not.toMatch(/csecret-xyz|rtok-xyz/);
    expect(row!.spec.secret.CLIENT_SECRET).toMatch(/^sealed:v1:/);
    const badKey = await t.json<ErrorBody>('/v0/integrations/connections', {
      method: 'POST',
      body: { metadata: { name: 'x' }, spec: { integration: 'github', secret: { 'client id': 'x' } } },
    });
    expect(badKey.status).toBe(400);
    expect(badKey.body.details?.[0]?.field).toMatch(/^body\.spec\.secret/);

    await t.json('/v0/functions', {
      method: 'POST',
      body: { metadata: { name: 'gh-mcp' }, spec: { integrationConnections: ['gh'] } },
    });
    const inUse = await t.json<ErrorBody>('/v0/integrations/connections/gh', { method: 'DELETE' });
    expect(inUse.status).toBe(409);
    expect(inUse.body.message).toContain('function "gh-mcp"');
    await t.json('/v0/functions/gh-mcp', { method: 'DELETE' });
    const deleted = await t.json<Json>('/v0/integrations/connections/gh', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.spec.secret.CLIENT_SECRET).toBe('********');
  });

  it('validates policies per type, reports usages and refuses to delete a policy in use', async () => {
    const missing = await t.json<ErrorBody>('/v0/policies', {
      method: 'POST',
      body: { metadata: { name: 'eu' }, spec: { type: 'location' } },
    });
    expect(missing.body.details?.[0]).toMatchObject({ field: 'body.spec.locations' });
    const badType = await t.json<ErrorBody>('/v0/policies', {
      method: 'POST',
      body: { metadata: { name: 'eu' }, spec: { type: 'region' } },
    });
    expect(badType.body.details?.[0]?.message).toMatch(/location, flavor, maxToken/);
    const created = await t.json<Json>('/v0/policies', {
      method: 'POST',
      body: {
        metadata: { name: 'eu' },
        spec: { type: 'location', locations: [{ name: 'eu', type: 'continent' }] },
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.usage).toEqual({ agents: 0, functions: 0, jobs: 0, models: 0, sandboxes: 0 });
    const budget = await t.json<Json>('/v0/policies', {
      method: 'POST',
      body: {
        metadata: { name: 'budget' },
        spec: { type: 'maxToken', maxTokens: { granularity: 'day', input: 1000 }, resourceTypes: ['model'] },
      },
    });
    expect(budget.body.spec.maxTokens).toMatchObject({ granularity: 'day', step: 2, input: 1000, output: 0 });

    const notForAgents = await t.json<ErrorBody>('/v0/agents', {
      method: 'POST',
      body: { metadata: { name: 'a' }, spec: { policies: ['budget'] } },
    });
    expect(notForAgents.body.details?.[0]).toMatchObject({ field: 'body.spec.policies.0' });
    const unknown = await t.json<ErrorBody>('/v0/agents', {
      method: 'POST',
      body: { metadata: { name: 'a' }, spec: { policies: ['nope'] } },
    });
    expect(unknown.body.details?.[0]?.message).toContain('"nope" does not exist');
    await t.json('/v0/agents', {
      method: 'POST',
      body: { metadata: { name: 'a' }, spec: { policies: ['eu'] } },
    });
    const usages = await t.json<Json>('/v0/policies/eu/usages');
    expect(usages.body).toEqual({ agents: ['a'], functions: [], jobs: [], models: [], sandboxes: [] });
    expect((await t.json<Json>('/v0/policies/eu')).body.usage.agents).toBe(1);
    expect((await t.json('/v0/policies/eu', { method: 'DELETE' })).status).toBe(409);
    await t.json('/v0/agents/a', { method: 'DELETE' });
    expect((await t.json('/v0/policies/eu', { method: 'DELETE' })).status).toBe(200);
    const list = await t.json<{ data: Json[]; meta: Json }>('/v0/policies', { version: '2026-04-28' });
    expect(list.body.data.map((p) => p.metadata.name)).toEqual(['budget']);
  });

  it('creates custom domains named by the domain, pending with the records to publish', async () => {
    const created = await t.json<Json>('/v0/customdomains', {
      method: 'POST',
      body: { metadata: { name: 'App.Example.com' }, spec: { domainType: 'applications' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.metadata.name).toBe('app.example.com');
    expect(created.body.spec).toMatchObject({
      domainType: 'applications',
      status: 'pending',
      cnameRecords: 'preview.localhost',
    });
    expect(Object.keys(created.body.spec.txtRecords)).toEqual(['_tarmac-challenge.app.example.com']);
    expect(
      (
        await t.json('/v0/customdomains', {
          method: 'POST',
          body: { metadata: { name: 'app.example.com' }, spec: {} },
        })
      ).status,
    ).toBe(409);
    const bad = await t.json<ErrorBody>('/v0/customdomains', {
      method: 'POST',
      body: { metadata: { name: 'localhost' }, spec: {} },
    });
    expect(bad.body.details?.[0]?.field).toBe('body.metadata.name');
    const badType = await t.json<ErrorBody>('/v0/customdomains', {
      method: 'POST',
      body: { metadata: { name: 'a.example.com' }, spec: { domainType: 'mail' } },
    });
    expect(badType.body.details?.[0]?.message).toMatch(/previews, applications/);
    expect(
      (await t.json<Json>('/v0/customdomains/app.example.com', { method: 'DELETE' })).body.metadata.name,
    ).toBe('app.example.com');
  });

  it('expires a pending share after 7 days (410) and keeps connection secrets across a masked PUT', async () => {
    let now = Date.now();
    const clocked = await openTestPlatform(db, { now: () => now });
    try {
      await clocked.json('/v0/images', {
        method: 'POST',
        body: { resourceType: 'agents', name: 'late', image: 'ghcr.io/acme/late:1' },
      });
      const partner = await clocked.addAccount({ workspace: 'partner' });
      const pending = await clocked.json<Json>('/v0/images/agents/late/share', {
        method: 'POST',
        body: { targetWorkspace: 'partner', targetAccountId: partner.accountId },
      });
      expect(pending.status).toBe(202);
      now += 8 * 86_400_000;
      const gone = await clocked.json<ErrorBody>(`/v0/pending-image-shares/${pending.body.id}/accept`, {
        method: 'POST',
        key: partner.apiKey,
      });
      expect(gone.status).toBe(410);
      expect(gone.body.error).toBe('gone');

      await clocked.json('/v0/integrations/connections', { method: 'POST', body: connection('gh') });
      const stored = await clocked.store.resources.get<Json>('default', 'integration-connection', 'gh');
      const read = await clocked.json<Json>('/v0/integrations/connections/gh');
      const put = await clocked.json<Json>('/v0/integrations/connections/gh', {
        method: 'PUT',
        body: {
          metadata: read.body.metadata,
          spec: { ...read.body.spec, secret: { ...read.body.spec.secret, CLIENT_ID: 'new-id' } },
        },
      });
      expect(put.status).toBe(200);
      const after = await clocked.store.resources.get<Json>('default', 'integration-connection', 'gh');
      // The masked values were kept as stored (same ciphertext); the changed one was sealed anew.
      expect(after!.spec.secret.CLIENT_SECRET).toBe(stored!.spec.secret.CLIENT_SECRET);
      expect(after!.spec.secret.REFRESH_TOKEN).toBe(stored!.spec.secret.REFRESH_TOKEN);
      expect(after!.spec.secret.CLIENT_ID).not.toBe(stored!.spec.secret.CLIENT_ID);
      expect(after!.spec.secret.CLIENT_ID).toMatch(/^sealed:v1:/);
    } finally {
      await clocked.dispose();
    }
  });

  it("hides another workspace's resources (404) and lets only admins share images (403)", async () => {
    await register('agents', 'mine', 'ghcr.io/acme/mine:1');
    await t.json('/v0/integrations/connections', { method: 'POST', body: connection('gh') });
    const outsider = await t.addAccount({ workspace: 'elsewhere' });
    expect((await t.json('/v0/images/agents/mine', { key: outsider.apiKey })).status).toBe(404);
    expect((await t.json('/v0/integrations/connections/gh', { key: outsider.apiKey })).status).toBe(404);
    expect((await t.json<Json[]>('/v0/images', { key: outsider.apiKey })).body).toEqual([]);
    const member = await t.addUser({ role: 'member' });
    const denied = await t.json('/v0/images/agents/mine/share', {
      method: 'POST',
      body: { targetWorkspace: 'elsewhere', targetAccountId: outsider.accountId },
      key: member.apiKey,
    });
    expect(denied.status).toBe(403);
  });
});
