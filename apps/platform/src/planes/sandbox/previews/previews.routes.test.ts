import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openTestPlatform,
  snapshotResources,
  type TestPlatform,
} from '../../../framework/test-support/platform-harness.js';

const preview = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name, resourceName: 'ignored', resourceType: 'sandbox' },
  spec: { port: 3000, public: true, ...spec },
});

describe.each(testDatabases(process.env))('previews and preview tokens over HTTP ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
    expect((await p.call('POST', '/v0/sandboxes', { metadata: { name: 'web' }, spec: {} })).status).toBe(200);
    expect((await p.call('POST', '/v0/sandboxes', { metadata: { name: 'api' }, spec: {} })).status).toBe(200);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('creates a preview with its own metadata shape and a host-style url', async () => {
    const { status, body } = await p.call('POST', '/v0/sandboxes/web/previews', preview('site'));
    expect(status).toBe(200);
    expect(body.metadata).toMatchObject({
      name: 'site',
      displayName: 'site',
      resourceName: 'web',
      resourceType: 'sandbox',
      workspace: 'default',
    });
    expect(Object.keys(body.metadata).sort()).toEqual([
      'createdAt',
      'createdBy',
      'displayName',
      'name',
      'resourceName',
      'resourceType',
      'updatedAt',
      'updatedBy',
      'workspace',
    ]);
    expect(body.spec.url).toMatch(/^http:\/\/[0-9a-f]{16}\.local\.preview\.localhost$/);
    expect(body.spec.region).toBe('local');
    expect(body.status).toBe('DEPLOYED');
    expect(body.events).toHaveLength(1);
    expect(p.notices).toContainEqual({ workspace: 'default', kind: 'preview', name: 'web/site' });
    expect((await p.call('GET', '/v0/sandboxes/web/previews/site')).body.spec.url).toBe(body.spec.url);
    const list = await p.call('GET', '/v0/sandboxes/web/previews');
    // A bare array (issue 14 item 3: the reference does not name previews among paginated lists).
    expect(list.body.map((x: { metadata: { name: string } }) => x.metadata.name)).toEqual(['site']);
    expect((await p.call('GET', '/v0/sandboxes/api/previews')).body).toEqual([]);
    expect((await p.call('POST', '/v0/sandboxes/web/previews', preview('site'))).status).toBe(409);
    expect((await p.call('POST', '/v0/sandboxes/none/previews', preview('x'))).status).toBe(404);
  });

  it('custom domain + prefixUrl: conflict is 409 without force, replaced with force=true', async () => {
    const custom = { customDomain: 'example.com', prefixUrl: 'app' };
    const first = await p.call('POST', '/v0/sandboxes/web/previews', preview('one', custom));
    expect(first.body.spec.url).toBe('http://app.preview.example.com');
    const clash = await p.call('POST', '/v0/sandboxes/api/previews', preview('two', custom));
    expect(clash.status).toBe(409);
    expect(clash.body.message).toContain('web/one');
    expect(
      (await p.call('POST', '/v0/sandboxes/api/previews', preview('two', { ...custom, prefixUrl: 'other' })))
        .status,
    ).toBe(200);
    const forced = await p.call('POST', '/v0/sandboxes/api/previews?force=true', preview('three', custom));
    expect(forced.status).toBe(200);
    expect((await p.call('GET', '/v0/sandboxes/web/previews/one')).status).toBe(404);
    expect((await p.call('POST', '/v0/sandboxes/web/previews?force=maybe', preview('x'))).status).toBe(400);
    const orphan = await p.call('POST', '/v0/sandboxes/web/previews', preview('x', { prefixUrl: 'app' }));
    expect(orphan.status).toBe(400);
    expect(orphan.body.message).toContain('spec.prefixUrl');
  });

  it('PUT updates a preview, name immutable; DELETE returns the deleted preview and its tokens go', async () => {
    await p.call('POST', '/v0/sandboxes/web/previews', preview('site'));
    const renamed = await p.call('PUT', '/v0/sandboxes/web/previews/site', preview('other'));
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toContain('metadata.name');
    const updated = await p.call(
      'PUT',
      '/v0/sandboxes/web/previews/site',
      preview('site', { port: 4000, public: false }),
    );
    expect(updated.status).toBe(200);
    expect(updated.body.spec).toMatchObject({ port: 4000, public: false });
    expect(updated.body.events).toHaveLength(2);
    await p.call('POST', '/v0/sandboxes/web/previews/site/tokens', {
      metadata: { name: 't1' },
      spec: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const deleted = await p.call('DELETE', '/v0/sandboxes/web/previews/site');
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('site');
    expect((await p.call('GET', '/v0/sandboxes/web/previews/site')).status).toBe(404);
    expect(await p.store.resources.get('default', 'preview-token', 't1', 'web/site')).toBeUndefined();
  });

  it('tokens: value sealed at rest and hashed, listed with its value, verified, deleted with a message', async () => {
    await p.call('POST', '/v0/sandboxes/web/previews', preview('site', { public: false }));
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await p.call('POST', '/v0/sandboxes/web/previews/site/tokens', {
      metadata: { name: 't1' },
      spec: { expiresAt },
    });
    expect(created.status).toBe(200);
    const token = created.body.spec.token as string;
    expect(token).toMatch(/^tpv_/);
    expect(created.body).toMatchObject({
      metadata: {
        name: 't1',
        previewName: 'site',
        resourceName: 'web',
        resourceType: 'sandbox',
        workspace: 'default',
      },
      spec: { expiresAt, expired: false },
    });
    expect(await snapshotResources(p.store)).not.toContain(token);
    // Issue 14 item 4: `spec.token` is a read-only response field (the vendor SDK's sessions.get and
    // fromSession read it from this list); a bare array (item 3). Sealed at rest (checked above).
    const list = await p.call('GET', '/v0/sandboxes/web/previews/site/tokens');
    expect(list.body).toHaveLength(1);
    expect(list.body[0].spec.token).toBe(token);
    const { previews } = await servicesOf(p);
    expect(await previews.tokens.verify('default', 'web', 'site', token)).toBe(true);
    expect(await previews.tokens.verify('default', 'web', 'site', `${token}x`)).toBe(false);
    const past = await p.call('POST', '/v0/sandboxes/web/previews/site/tokens', {
      spec: { expiresAt: '2000-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.message).toContain('spec.expiresAt');
    const deleted = await p.call('DELETE', '/v0/sandboxes/web/previews/site/tokens/t1');
    expect(deleted).toEqual({ status: 200, body: { message: 'Preview token "t1" deleted' } });
    expect(await previews.tokens.verify('default', 'web', 'site', token)).toBe(false);
    expect((await p.call('DELETE', '/v0/sandboxes/web/previews/site/tokens/t1')).status).toBe(404);
  });

  it('deleting the sandbox removes its previews and their tokens', async () => {
    await p.call('POST', '/v0/sandboxes/web/previews', preview('site'));
    await p.call('POST', '/v0/sandboxes/api/previews', preview('kept'));
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    await p.call('POST', '/v0/sandboxes/web/previews/site/tokens', {
      metadata: { name: 't' },
      spec: { expiresAt },
    });
    expect((await p.call('DELETE', '/v0/sandboxes/web')).status).toBe(200);
    expect(await p.store.resources.get('default', 'preview', 'site', 'web')).toBeUndefined();
    expect(await p.store.resources.get('default', 'preview-token', 't', 'web/site')).toBeUndefined();
    expect(await p.store.resources.get('default', 'preview', 'kept', 'api')).toBeDefined();
  });

  it('another workspace cannot see or touch previews', async () => {
    await p.call('POST', '/v0/sandboxes/web/previews', preview('site'));
    expect(
      (await p.call('GET', '/v0/sandboxes/web/previews/site', undefined, { as: 'outsider' })).status,
    ).toBe(404);
    expect((await p.call('GET', '/v0/sandboxes/web/previews', undefined, { as: 'outsider' })).status).toBe(
      404,
    );
    expect(
      (await p.call('DELETE', '/v0/sandboxes/web/previews/site', undefined, { as: 'outsider' })).status,
    ).toBe(404);
  });
});

async function servicesOf(p: TestPlatform) {
  const { computeStorageServices } = await import('../compute-storage.js');
  const { SecretBox } = await import('../../../framework/secrets.js');
  const { DEFAULT_HOSTS } = await import('../../../framework/hosts.js');
  return computeStorageServices({
    store: p.store,
    feed: p.feed,
    now: () => new Date(),
    secrets: new SecretBox(p.secretKey),
    hosts: DEFAULT_HOSTS,
    apiUrl: () => 'http://127.0.0.1:8080',
    signDriveToken: async () => 'unused',
  });
}
