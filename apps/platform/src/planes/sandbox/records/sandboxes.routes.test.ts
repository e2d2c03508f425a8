import { testDatabases } from '@tarmac/store/test-support';
import { sql } from 'kysely';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openTestPlatform,
  snapshotResources,
  type TestPlatform,
} from '../../../framework/test-support/platform-harness.js';

const sandbox = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, labels: { team: 'a' } },
  spec: {
    runtime: { image: 'base:latest', memory: 2048, ports: [{ target: 3000, protocol: 'tcp' }] },
    ...extra,
  },
});

describe.each(testDatabases(process.env))('sandboxes over HTTP ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('creates a sandbox: 200, DEPLOYING, metadata filled in, an event, a change notice', async () => {
    const { status, body } = await p.call('POST', '/v0/sandboxes', sandbox('web'));
    expect(status).toBe(200);
    expect(body.status).toBe('DEPLOYING');
    expect(body.metadata).toMatchObject({
      name: 'web',
      displayName: 'web',
      workspace: 'default',
      labels: { team: 'a' },
      plan: 'self-hosted',
      url: 'http://sbx-web-default.local.localhost',
    });
    expect(body.metadata.createdBy).toMatch(/^/);
    expect(body.spec.runtime.ports[0].protocol).toBe('TCP');
    expect(body.spec.region).toBe('local');
    expect(body.events).toHaveLength(1);
    expect(body.events[0]).toMatchObject({
      type: 'deployment',
      status: 'DEPLOYING',
      revision: '1',
      canaryRevision: '',
    });
    expect(body.expiresIn).toBeUndefined();
    expect(p.notices).toContainEqual({ workspace: 'default', kind: 'sandbox', name: 'web' });
    const got = await p.call('GET', '/v0/sandboxes/web');
    expect(got.status).toBe(200);
    expect(got.body.metadata.name).toBe('web');
  });

  it('a duplicate name is a 409 the vendor SDK recognises; createIfNotExist returns the live one', async () => {
    await p.call('POST', '/v0/sandboxes', sandbox('web'));
    const dup = await p.call('POST', '/v0/sandboxes', sandbox('web'));
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({
      error: 'sandbox_already_exists',
      code: 409,
      sandbox_name: 'web',
      status_code: 409,
    });
    expect(dup.body.message).toContain('web');
    const again = await p.call('POST', '/v0/sandboxes?createIfNotExist=true', sandbox('web'));
    expect(again.status).toBe(200);
    expect(again.body.metadata.name).toBe('web');
    // Once it is being deleted (or FAILED / TERMINATED), createIfNotExist no longer returns it.
    await p.call('DELETE', '/v0/sandboxes/web');
    const gone = await p.call('POST', '/v0/sandboxes?createIfNotExist=true', sandbox('web'));
    expect(gone.status).toBe(409);
    const row = (await p.store.resources.get('default', 'sandbox', 'web'))!;
    await p.store.resources.update(row.id, { status: 'FAILED' });
    expect((await p.call('POST', '/v0/sandboxes?createIfNotExist=true', sandbox('web'))).status).toBe(409);
    await p.store.resources.update(row.id, { status: 'DEPLOYED' });
    expect((await p.call('POST', '/v0/sandboxes?createIfNotExist=true', sandbox('web'))).status).toBe(200);
  });

  // Issue 14 item 2: the README tour run twice, and the vendor SDK's createIfNotExists after a delete.
  it('a deleted name is free at once: a TERMINATED record does not block, and shows no state', async () => {
    await p.call('POST', '/v0/sandboxes', sandbox('hello'));
    const row = (await p.store.resources.get('default', 'sandbox', 'hello'))!;
    await p.store.resources.update(row.id, { status: 'DEPLOYED', state: 'RUNNING' });
    await p.call('DELETE', '/v0/sandboxes/hello');
    // What the controller writes once the container is gone.
    await p.store.resources.update(row.id, {
      status: 'TERMINATED',
      state: null,
      terminatedAt: new Date().toISOString(),
    });
    const ended = await p.call('GET', '/v0/sandboxes/hello');
    expect([ended.body.status, ended.body.state]).toEqual(['TERMINATED', undefined]);
    for (const query of ['', '?createIfNotExist=true']) {
      const again = await p.call('POST', `/v0/sandboxes${query}`, sandbox('hello'));
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body.status).toBe('DEPLOYING');
      const got = await p.call('GET', '/v0/sandboxes/hello');
      expect(got.body.status).toBe('DEPLOYING');
      await p.call('DELETE', '/v0/sandboxes/hello');
      const current = (await p.store.resources.get('default', 'sandbox', 'hello'))!;
      expect(current.id).not.toBe(row.id);
      await p.store.resources.update(current.id, {
        status: 'TERMINATED',
        terminatedAt: new Date().toISOString(),
      });
    }
  });

  // Issue 14 item 8: what the platform cannot apply is a 400 naming the field, not stored and ignored.
  it('vpc other than "default" and extraArgs flags "enabled" are 400 naming the field', async () => {
    const vpc = await p.call('POST', '/v0/sandboxes', sandbox('v', { vpc: 'corp' }));
    expect([vpc.status, vpc.body.details?.[0]?.field]).toEqual([400, 'spec.vpc']);
    expect((await p.call('POST', '/v0/sandboxes', sandbox('v', { vpc: 'default' }))).status).toBe(200);
    for (const flag of ['iptables', 'nfs', 'tun']) {
      const res = await p.call(
        'POST',
        '/v0/sandboxes',
        sandbox(`x-${flag}`, { runtime: { image: 'base:latest', extraArgs: { [flag]: 'enabled' } } }),
      );
      expect([res.status, res.body.details?.[0]?.field]).toEqual([400, `spec.runtime.extraArgs.${flag}`]);
    }
    const off = await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('off', { runtime: { image: 'base:latest', extraArgs: { tun: 'disabled' } } }),
    );
    expect(off.status).toBe(200);
  });

  // Issue 14 item 8: `spec.enabled: false` is not ignored (the controller freezes it: e2e blaxel-core).
  it('spec.enabled: false creates a DEACTIVATED sandbox and a PUT with it asks for DEACTIVATING', async () => {
    const off = await p.call('POST', '/v0/sandboxes', sandbox('off', { enabled: false }));
    expect([off.status, off.body.status, off.body.state]).toEqual([200, 'DEACTIVATED', undefined]);
    expect(p.notices).toContainEqual({ workspace: 'default', kind: 'sandbox', name: 'off' });
    const on = await p.call('PUT', '/v0/sandboxes/off', sandbox('off', { enabled: true }));
    expect(on.body.status).toBe('DEPLOYING');
    const again = await p.call('PUT', '/v0/sandboxes/off', sandbox('off', { enabled: false }));
    expect(again.body.status).toBe('DEACTIVATING');
    expect(again.body.events.at(-1)).toMatchObject({ status: 'DEACTIVATING' });
  });

  // Issue 14 item 8: spec "POST /v0/sandboxes → sandbox with events, expiresIn, lastUsedAt, state, status".
  it('the create response carries state and lastUsedAt', async () => {
    const { body } = await p.call('POST', '/v0/sandboxes', sandbox('fresh'));
    expect(body.state).toBe('RUNNING');
    expect(body.lastUsedAt).toBe(body.metadata.createdAt);
  });

  it('creates a sandbox without a name (the vendor SDK may omit it)', async () => {
    const { status, body } = await p.call('POST', '/v0/sandboxes', { metadata: {}, spec: {} });
    expect(status).toBe(200);
    expect(body.metadata.name).toMatch(/^sandbox-[0-9a-f]{8}$/);
  });

  it('rejects bad input with a 400 naming the field and the allowed values', async () => {
    const cases: [unknown, string, string?][] = [
      [sandbox('Bad_Name'), 'body.metadata.name'],
      [{ ...sandbox('x'), metadata: { name: 'a'.repeat(50) } }, 'body.metadata.name', '49'],
      [
        { ...sandbox('x'), metadata: { name: 'x', displayName: 'd'.repeat(64) } },
        'body.metadata.displayName',
        '63',
      ],
      [
        { ...sandbox('x'), metadata: { name: 'x', externalId: 'e'.repeat(65) } },
        'body.metadata.externalId',
        '64',
      ],
      [{ metadata: { name: 'x' } }, 'body.spec', 'required'],
      [{ spec: {} }, 'body.metadata', 'required'],
      [
        sandbox('x', { runtime: { ports: [{ target: 80, protocol: 'SCTP' }] } }),
        'body.spec.runtime.ports.0.protocol',
        'HTTP, TCP, UDP, TLS',
      ],
      [sandbox('x', { runtime: { memory: 'lots' } }), 'body.spec.runtime.memory'],
      [sandbox('x', { runtime: { ttl: '10 minutes' } }), 'body.spec.runtime.ttl', '30s'],
      [
        sandbox('x', { runtime: { extraArgs: { iptables: 'on' } } }),
        'body.spec.runtime.extraArgs.iptables',
        'enabled or disabled',
      ],
      [
        sandbox('x', { runtime: { extraArgs: { gpu: 'enabled' } } }),
        'body.spec.runtime.extraArgs.gpu',
        'unknown',
      ],
      [
        sandbox('x', {
          lifecycle: { expirationPolicies: [{ type: 'ttl-forever', value: '1h', action: 'delete' }] },
        }),
        'body.spec.lifecycle.expirationPolicies.0.type',
        'ttl-idle, ttl-max-age, date',
      ],
      [
        sandbox('x', {
          lifecycle: { expirationPolicies: [{ type: 'ttl-idle', value: '1h', action: 'archive' }] },
        }),
        'body.spec.lifecycle.expirationPolicies.0.action',
        'delete',
      ],
      [
        sandbox('x', { lifecycle: { expirationPolicies: [{ type: 'date', value: 'tomorrow' }] } }),
        'body.spec.lifecycle.expirationPolicies.0.value',
        'ISO',
      ],
      [
        sandbox('x', { volumes: [{ name: 'nope', mountPath: '/data' }] }),
        'spec.volumes.0.name',
        'does not exist',
      ],
    ];
    for (const [body, field, words] of cases) {
      const before = await snapshotResources(p.store);
      const res = await p.call('POST', '/v0/sandboxes', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(field);
      if (words) expect(res.body.message).toContain(words);
      expect(await snapshotResources(p.store)).toBe(before);
    }
  });

  it('secret envs: sealed at rest, masked by default, revealed to admins with show_secrets, 403 for members', async () => {
    const body = sandbox('web', {
      runtime: {
        envs: [
          { name: 'TOKEN', value: 'hunter2-very-secret', secret: true },
          { name: 'PLAIN', value: 'visible' },
        ],
      },
    });
    const created = await p.call('POST', '/v0/sandboxes', body);
    expect(created.body.spec.runtime.envs).toEqual([
      { name: 'TOKEN', value: '********', secret: true },
      { name: 'PLAIN', value: 'visible' },
    ]);
    const raw = JSON.stringify(await p.store.db.selectFrom('resources').select('spec').execute());
    expect(raw).not.toContain('hunter2-very-secret');
    expect(raw).toContain('sealed:v1:');
    expect((await p.call('GET', '/v0/sandboxes/web?show_secrets=true')).body.spec.runtime.envs[0].value).toBe(
      'hunter2-very-secret',
    );
    expect((await p.call('GET', '/v0/sandboxes/web', undefined, { as: 'member' })).status).toBe(200);
    const denied = await p.call('GET', '/v0/sandboxes/web?show_secrets=true', undefined, { as: 'member' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
    // A GET (masked) then PUT of the same body keeps the secret.
    const masked = (await p.call('GET', '/v0/sandboxes/web')).body;
    expect(
      (await p.call('PUT', '/v0/sandboxes/web', { metadata: masked.metadata, spec: masked.spec })).status,
    ).toBe(200);
    expect((await p.call('GET', '/v0/sandboxes/web?show_secrets=true')).body.spec.runtime.envs[0].value).toBe(
      'hunter2-very-secret',
    );
  });

  it('the SQLite file alone reveals no secret value', async () => {
    if (database.name !== 'sqlite') return;
    await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('web', { runtime: { envs: [{ name: 'K', value: 'zebra-canary-4242', secret: true }] } }),
    );
    await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('proxy', {
        network: {
          proxy: {
            routing: [
              {
                destinations: ['api.example.com'],
                headers: { a: '{{SECRET:k}}' },
                secrets: { k: 'lion-canary-7777' },
              },
            ],
          },
        },
      }),
    );
    const file = await dbFile(p);
    const bytes = readFileSync(file).toString('latin1') + readWal(file);
    expect(bytes).toContain('sealed:v1:');
    expect(bytes).not.toContain('zebra-canary-4242');
    expect(bytes).not.toContain('lion-canary-7777');
  });

  it('PUT replaces the spec, keeps the name immutable and appends an event', async () => {
    await p.call('POST', '/v0/sandboxes', sandbox('web'));
    const renamed = await p.call('PUT', '/v0/sandboxes/web', sandbox('other'));
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toContain('metadata.name');
    const extra = await p.call(
      'PUT',
      '/v0/sandboxes/web',
      sandbox('web', { runtime: { extraArgs: { tun: 'enabled' } } }),
    );
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain('spec.runtime.extraArgs');
    const updated = await p.call('PUT', '/v0/sandboxes/web', {
      metadata: { name: 'web', displayName: 'Web' },
      spec: { runtime: { image: 'base:latest', memory: 4096 } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.spec.runtime.memory).toBe(4096);
    expect(updated.body.metadata.displayName).toBe('Web');
    expect(updated.body.events.map((e: { revision: string }) => e.revision)).toEqual(['1', '2']);
    expect((await p.call('PUT', '/v0/sandboxes/none', sandbox('none'))).status).toBe(404);
  });

  it('expiresIn appears only with ttl, expires or expiration policies, and counts down', async () => {
    const ttl = await p.call('POST', '/v0/sandboxes', sandbox('a', { runtime: { ttl: '1h' } }));
    expect(ttl.body.expiresIn).toBeGreaterThan(3590);
    expect(ttl.body.expiresIn).toBeLessThanOrEqual(3600);
    const policy = await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('b', {
        lifecycle: {
          expirationPolicies: [
            { type: 'ttl-max-age', value: '2d', action: 'delete' },
            { type: 'ttl-idle', value: '5m' },
          ],
        },
      }),
    );
    expect(policy.body.expiresIn).toBeGreaterThan(290);
    expect(policy.body.expiresIn).toBeLessThanOrEqual(300);
    const retentionOnly = await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('c', { lifecycle: { terminatedRetention: '5m' } }),
    );
    expect(retentionOnly.body.expiresIn).toBeUndefined();
  });

  // Issue 14 item 5: the vendor SDK's updateTtl(null) / updateLifecycle(null) PUT the sandbox it
  // read back (status, events, state... included) with `ttl: null` / `lifecycle: null`.
  it('null clears ttl, expires, lifecycle and network on PUT', async () => {
    const made = await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('t', {
        runtime: { image: 'base:latest', memory: 2048, ttl: '1h', expires: '2099-01-01T00:00:00Z' },
        lifecycle: { expirationPolicies: [{ type: 'ttl-idle', value: '5m' }] },
      }),
    );
    expect(made.body.expiresIn).toBeGreaterThan(0);
    const body = made.body;
    const cleared = await p.call('PUT', '/v0/sandboxes/t', {
      ...body,
      spec: {
        ...body.spec,
        lifecycle: null,
        network: null,
        runtime: { ...body.spec.runtime, ttl: null, expires: null },
      },
    });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.expiresIn).toBeUndefined();
    expect(cleared.body.spec.runtime.ttl).toBeUndefined();
    expect(cleared.body.spec.runtime.expires).toBeUndefined();
    expect(cleared.body.spec.lifecycle).toBeUndefined();
    expect((await p.call('GET', '/v0/sandboxes/t')).body.spec.runtime).not.toHaveProperty('ttl');
  });

  it('DELETE marks DELETING and returns the sandbox; the controller terminates', async () => {
    await p.call('POST', '/v0/sandboxes', sandbox('web'));
    const deleted = await p.call('DELETE', '/v0/sandboxes/web');
    expect(deleted.status).toBe(200);
    expect(deleted.body.status).toBe('DELETING');
    expect(deleted.body.events.at(-1)).toMatchObject({ status: 'DELETING' });
    expect((await p.call('DELETE', '/v0/sandboxes/missing')).status).toBe(404);
  });

  it('lists with pagination, status filter (case-insensitive, unknown 400), showTerminated and externalId', async () => {
    for (let i = 0; i < 5; i++) {
      await p.call('POST', '/v0/sandboxes', {
        ...sandbox(`s${i}`),
        metadata: { name: `s${i}`, externalId: `ext-${i}` },
      });
    }
    const ids = (await p.store.resources.list('default', 'sandbox', { sort: 'name:asc', limit: 10 })).items;
    await p.store.resources.update(ids[0]!.id, { status: 'DEPLOYED' });
    await p.store.resources.update(ids[1]!.id, {
      status: 'TERMINATED',
      terminatedAt: new Date().toISOString(),
    });
    const first = await p.call('GET', '/v0/sandboxes?limit=2&sort=name:asc');
    expect(first.body.data.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['s0', 's2']);
    expect(first.body.meta).toMatchObject({ hasMore: true, total: 5 });
    const second = await p.call(
      'GET',
      `/v0/sandboxes?limit=2&sort=name:asc&cursor=${first.body.meta.nextCursor}`,
    );
    expect(second.body.data.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual([
      's3',
      's4',
    ]);
    const deployed = await p.call('GET', '/v0/sandboxes?status=deployed,Failed');
    expect(deployed.body.data.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['s0']);
    const terminated = await p.call('GET', '/v0/sandboxes?status=TERMINATED');
    expect(terminated.body.data.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['s1']);
    const all = await p.call('GET', '/v0/sandboxes?showTerminated=true');
    expect(all.body.data).toHaveLength(5);
    const bad = await p.call('GET', '/v0/sandboxes?status=DEPLOYED,SLEEPING');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('query.status');
    expect(bad.body.message).toContain('SLEEPING');
    expect(bad.body.message).toContain('DEPLOYED');
    const byExt = await p.call('GET', '/v0/sandboxes?externalId=ext-3');
    expect(byExt.body.data.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['s3']);
    expect((await p.call('GET', '/v0/sandboxes/by-external-id/ext-4')).body.metadata.name).toBe('s4');
    expect((await p.call('GET', '/v0/sandboxes/by-external-id/nope')).status).toBe(404);
    const legacy = await p.call('GET', '/v0/sandboxes', undefined, { version: '2026-04-16' });
    expect(Array.isArray(legacy.body)).toBe(true);
  });

  it('another workspace sees none of it (404, empty list)', async () => {
    await p.call('POST', '/v0/sandboxes', sandbox('web'));
    expect((await p.call('GET', '/v0/sandboxes/web', undefined, { as: 'outsider' })).status).toBe(404);
    expect((await p.call('DELETE', '/v0/sandboxes/web', undefined, { as: 'outsider' })).status).toBe(404);
    expect((await p.call('PUT', '/v0/sandboxes/web', sandbox('web'), { as: 'outsider' })).status).toBe(404);
    expect((await p.call('GET', '/v0/sandboxes', undefined, { as: 'outsider' })).body.data).toEqual([]);
    expect((await p.call('POST', '/v0/sandboxes', sandbox('web'), { as: 'outsider' })).status).toBe(200);
  });

  it('an image the engine cannot run is a 400 INVALID_IMAGE and nothing is stored', async () => {
    p.hooks.validateImage = async (ref) => ref !== 'missing:latest';
    const res = await p.call('POST', '/v0/sandboxes', sandbox('x', { runtime: { image: 'missing:latest' } }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_image', code: 400, reason: 'INVALID_IMAGE' });
    expect(res.body.message).toContain('spec.runtime.image');
    expect(await p.store.resources.get('default', 'sandbox', 'x')).toBeUndefined();
    expect(
      (await p.call('POST', '/v0/sandboxes', sandbox('y', { runtime: { image: 'base:latest' } }))).status,
    ).toBe(200);
  });
});

async function dbFile(p: TestPlatform): Promise<string> {
  const { rows } = await sql<{ file: string }>`pragma database_list`.execute(p.store.db);
  return rows[0]!.file;
}

function readWal(file: string): string {
  try {
    return readFileSync(`${file}-wal`).toString('latin1');
  } catch {
    return '';
  }
}
