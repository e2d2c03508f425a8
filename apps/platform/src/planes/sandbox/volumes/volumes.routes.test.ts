import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';

const volume = (
  name: string,
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
) => ({
  metadata: { name, ...metadata },
  spec: { size: 2048, ...spec },
});

describe.each(testDatabases(process.env))('volumes over HTTP ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('creates a volume with defaults, state.attachedTo and a status computed from events', async () => {
    const { status, body } = await p.call(
      'POST',
      '/v0/volumes',
      volume('data', { size: undefined }, { externalId: 'v-1' }),
    );
    expect(status).toBe(200);
    expect(body.spec).toMatchObject({ size: 1024, region: 'local' });
    expect(body.spec.infrastructureId).toMatch(/^vol-/);
    expect(body.state).toEqual({ attachedTo: '' });
    expect(body.status).toBe(body.events.at(-1).status);
    expect(body.metadata.url).toBe('http://127.0.0.1:8080/v0/volumes/data');
    expect((await p.call('POST', '/v0/volumes', volume('data'))).status).toBe(409);
    expect((await p.call('GET', '/v0/volumes/by-external-id/v-1')).body.metadata.name).toBe('data');
    expect((await p.call('GET', '/v0/volumes?externalId=v-1')).body.data).toHaveLength(1);
  });

  it('spec is immutable except that size grows; a change is a 400 naming the field', async () => {
    // Issue 14 item 8: there are no volume templates here; a template is refused, not ignored.
    const templated = await p.call('POST', '/v0/volumes', volume('data', { template: 'base:1' }));
    expect(templated.status).toBe(400);
    expect(templated.body.message).toContain('spec.template');
    await p.call('POST', '/v0/volumes', volume('data'));
    const region = await p.call('PUT', '/v0/volumes/data', volume('data', { region: 'eu' }));
    expect(region.status).toBe(400);
    expect(region.body.message).toContain('spec.region');
    const template = await p.call('PUT', '/v0/volumes/data', volume('data', { template: 'other:1' }));
    expect(template.body.message).toContain('spec.template');
    const shrink = await p.call('PUT', '/v0/volumes/data', volume('data', { size: 1024 }));
    expect(shrink.status).toBe(400);
    expect(shrink.body.message).toContain('spec.size');
    const grow = await p.call(
      'PUT',
      '/v0/volumes/data',
      volume('data', { size: 4096 }, { displayName: 'Data' }),
    );
    expect(grow.status).toBe(200);
    expect(grow.body.spec.size).toBe(4096);
    expect(grow.body.metadata.displayName).toBe('Data');
    expect(grow.body.events.at(-1)).toMatchObject({ type: 'resized', revision: '2' });
    expect((await p.call('PUT', '/v0/volumes/data', volume('renamed'))).body.message).toContain(
      'metadata.name',
    );
  });

  it('a volume held by a sandbox cannot be deleted (409); DELETE returns it with terminatedAt', async () => {
    await p.call('POST', '/v0/volumes', volume('data'));
    const box = await p.call('POST', '/v0/sandboxes', {
      metadata: { name: 'box' },
      spec: { volumes: [{ name: 'data', mountPath: '/data' }] },
    });
    expect(box.status).toBe(200);
    expect((await p.call('GET', '/v0/volumes/data')).body.state.attachedTo).toBe('sandbox:box');
    const second = await p.call('POST', '/v0/sandboxes', {
      metadata: { name: 'box2' },
      spec: { volumes: [{ name: 'data', mountPath: '/d' }] },
    });
    expect(second.status).toBe(409);
    expect(await p.store.resources.get('default', 'sandbox', 'box2')).toBeUndefined();
    const held = await p.call('DELETE', '/v0/volumes/data');
    expect(held.status).toBe(409);
    expect(held.body.message).toContain('sandbox:box');
    // Dropping the volume from the sandbox's spec frees it.
    expect((await p.call('PUT', '/v0/sandboxes/box', { metadata: { name: 'box' }, spec: {} })).status).toBe(
      200,
    );
    const deleted = await p.call('DELETE', '/v0/volumes/data');
    expect(deleted.status).toBe(200);
    expect(deleted.body.terminatedAt).toEqual(expect.any(String));
    expect(deleted.body.status).toBe('TERMINATED');
    expect((await p.call('GET', '/v0/volumes')).body.data).toEqual([]);
    expect((await p.call('GET', '/v0/volumes?showTerminated=true')).body.data).toHaveLength(1);
    expect((await p.call('GET', '/v0/volumes?status=terminated')).body.data).toHaveLength(1);
    // The name is free again.
    expect((await p.call('POST', '/v0/volumes', volume('data'))).status).toBe(200);
  });

  it('is scoped to the workspace', async () => {
    await p.call('POST', '/v0/volumes', volume('data'));
    expect((await p.call('GET', '/v0/volumes/data', undefined, { as: 'outsider' })).status).toBe(404);
    expect((await p.call('DELETE', '/v0/volumes/data', undefined, { as: 'outsider' })).status).toBe(404);
    expect((await p.call('GET', '/v0/volumes', undefined, { as: 'outsider' })).body.meta.total).toBe(0);
  });
});
