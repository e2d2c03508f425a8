// The thin wrappers over the contract's catalogue route tables (workloads, support kinds, storage,
// billing) and the remaining sandbox/preview routes, against the real platform binary.
import { ConflictError, NotFoundError, Sandbox, type Tarmac } from '@tarmac/sdk';
import { createClient } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from './fixture.js';

let platform: RunningPlatform;
let tarmac: Tarmac;

beforeAll(async () => {
  platform = await startTestPlatform({ bridge: 'tarmacsc0', subnet: '10.241.0.0/16' });
  tarmac = await createClient({ env: {}, home: platform.home });
});
afterAll(async () => {
  expect(await stopTestPlatform(platform)).toEqual([]);
}, 120_000);

describe('catalogue wrappers', () => {
  it('lists every kind (empty on a new platform)', async () => {
    for (const api of [
      tarmac.agents,
      tarmac.functions,
      tarmac.models,
      tarmac.jobs,
      tarmac.applications,
      tarmac.policies,
      tarmac.integrationConnections,
      tarmac.customDomains,
      tarmac.volumes,
      tarmac.drives,
    ]) {
      expect(await api.list().all()).toEqual([]);
    }
  });

  it('runs create, get, update, list, delete on a model', async () => {
    const body = {
      metadata: { name: 'gpt' },
      spec: { runtime: { type: 'openai' as const, model: 'gpt-4.1' } },
    };
    const created = await tarmac.models.create(body);
    expect(created.metadata.name).toBe('gpt');
    await expect(tarmac.models.create(body)).rejects.toBeInstanceOf(ConflictError);
    const updated = await tarmac.models.update('gpt', {
      ...body,
      metadata: { name: 'gpt', displayName: 'GPT' },
    });
    expect(updated.metadata.displayName).toBe('GPT');
    expect((await tarmac.models.get('gpt')).metadata.displayName).toBe('GPT');
    expect((await tarmac.models.list().all()).map((m) => m.metadata.name)).toEqual(['gpt']);
    await tarmac.models.delete('gpt');
    await expect(tarmac.models.get('gpt')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('creates and deletes policies, volumes and integration connections', async () => {
    await tarmac.policies.create({
      metadata: { name: 'us-only' },
      spec: { type: 'location', locations: [{ name: 'us', type: 'country' }] },
    });
    expect((await tarmac.policies.get('us-only')).spec.type).toBe('location');
    await tarmac.policies.delete('us-only');

    const volume = await tarmac.volumes.create({ metadata: { name: 'data' }, spec: { size: 64 } });
    expect(volume.spec.size).toBe(64);
    expect((await tarmac.volumes.list().all()).map((v) => v.metadata.name)).toEqual(['data']);
    await tarmac.volumes.delete('data');

    await tarmac.integrationConnections.create({
      metadata: { name: 'openai' },
      spec: { integration: 'openai', secret: { OPENAI_API_KEY: 'sk-test' } },
    });
    expect((await tarmac.integrationConnections.get('openai')).spec.integration).toBe('openai');
    await tarmac.integrationConnections.delete('openai');
  });

  it('reads billing metrics of the account in credentials.json', async () => {
    expect((await tarmac.billing.groupByValues()).values).toContain('resource_type');
    const metrics = await tarmac.billing.metrics({
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-01-02T00:00:00Z',
    });
    expect([metrics.resolution, metrics.summary.totalCost]).toEqual(['hourly', 0]);
    const types = await tarmac.billing.resourceTypes({
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-01-02T00:00:00Z',
    });
    expect(types.values).toEqual([]);
  });
});

describe('remaining sandbox and preview routes', () => {
  it('finds a sandbox by external id, updates labels and ttl, and updates a preview', async () => {
    const sandbox = await Sandbox.create({ name: 'ext', externalId: 'order-42', ports: [3000] }, tarmac);
    expect((await tarmac.sandboxes.getByExternalId('order-42')).name).toBe('ext');
    await sandbox.updateLabels({ team: 'blue' });
    expect((await Sandbox.get('ext', tarmac)).metadata.labels).toEqual({ team: 'blue' });
    await sandbox.updateTtl('2h');
    expect((await Sandbox.get('ext', tarmac)).spec.runtime?.ttl).toBe('2h');
    await sandbox.updateTtl(null);
    expect((await Sandbox.get('ext', tarmac)).spec.runtime?.ttl).toBeUndefined();

    await sandbox.previews.create({ name: 'web', port: 3000, public: true });
    const updated = await sandbox.previews.update({ name: 'web', port: 3000, public: false });
    expect(updated.spec.public).toBe(false);
    await sandbox.delete();
  });
});
