// Issue 3 part B: agents, functions, models, jobs and applications over HTTP (in-process), on SQLite
// and PostgreSQL: create 200 / duplicate 409 / delete 200 with the resource, PUT upserts for models
// and applications, revisions, show_secrets for admins only, secrets sealed at rest, enumerations
// naming their allowed values, references to connections and policies checked.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type Envelope = {
  metadata: Record<string, unknown>;
  spec: Record<string, any>;
  events: { type: string; status: string; message: string }[];
  status: string;
};
type ErrorBody = { error: string; message: string; details?: { field: string; message: string }[] };
const PAGED = '2026-04-28';

const agent = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, labels: { team: 'ai' } },
  spec: {
    runtime: {
      image: 'agents/helper:v1',
      memory: 4096,
      envs: [
        { name: 'MODE', value: 'fast' },
        { name: 'API_TOKEN', value: 'tok-secret-123', secret: true },
      ],
    },
    triggers: [{ type: 'http', configuration: { path: '/invoke', authenticationType: 'private' } }],
    ...extra,
  },
});

describe.each(testDatabases(process.env))('workload resources on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
  });
  afterEach(async () => t.dispose());

  it('creates an agent (200, DEPLOYING with an honest event), 409 on a duplicate name', async () => {
    const created = await t.json<Envelope>('/v0/agents', { method: 'POST', body: agent('helper') });
    expect(created.status).toBe(200);
    expect(created.body.metadata).toMatchObject({
      name: 'helper',
      workspace: 'default',
      labels: { team: 'ai' },
    });
    expect(created.body.status).toBe('DEPLOYING');
    expect(created.body.events.at(-1)?.message).toMatch(/^Accepted; starting a replica of image /);
    expect(created.body.spec.runtime).toMatchObject({ memory: 4096, generation: 'mk3', minScale: 0 });
    const again = await t.json<ErrorBody>('/v0/agents', { method: 'POST', body: agent('helper') });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
    const disabled = await t.json<Envelope>('/v0/agents', {
      method: 'POST',
      body: agent('off', { enabled: false }),
    });
    // The run plane (planes/run) moves it on to DEACTIVATED once no replica runs (issue 16).
    expect(disabled.body.status).toBe('DEACTIVATING');
  });

  it('masks secret envs, seals them at rest, reveals them to admins with show_secrets (403 for members)', async () => {
    const created = await t.json<Envelope>('/v0/agents', { method: 'POST', body: agent('helper') });
    expect(created.body.spec.runtime.envs).toEqual([
      { name: 'MODE', value: 'fast' },
      { name: 'API_TOKEN', value: '********', secret: true },
    ]);
    const row = await t.store.resources.get<any>('default', 'agent', 'helper');
    expect(JSON.stringify(row)).not.toContain('tok-secret-123');
    expect(row!.spec.runtime.envs[1].value).toMatch(/^sealed:v1:/);

    const masked = await t.json<Envelope>('/v0/agents/helper');
    expect(masked.body.spec.runtime.envs[1].value).toBe('********');
    const shown = await t.json<Envelope>('/v0/agents/helper?show_secrets=true');
    expect(shown.status).toBe(200);
    expect(shown.body.spec.runtime.envs[1].value).toBe('tok-secret-123');

    const member = await t.addUser({ role: 'member' });
    const denied = await t.json<ErrorBody>('/v0/agents/helper?show_secrets=true', { key: member.apiKey });
    expect(denied.status).toBe(403);
    expect((await t.json('/v0/agents/helper', { key: member.apiKey })).status).toBe(200);

    // GET (masked) then PUT of the same body keeps the secret.
    const body = { metadata: masked.body.metadata, spec: masked.body.spec };
    const put = await t.json<Envelope>('/v0/agents/helper', { method: 'PUT', body });
    expect(put.status).toBe(200);
    const after = await t.json<Envelope>('/v0/agents/helper?show_secrets=true');
    expect(after.body.spec.runtime.envs[1].value).toBe('tok-secret-123');
  });

  it('keeps revisions newest first and deletes with the deleted resource in the body', async () => {
    await t.json('/v0/agents', { method: 'POST', body: agent('helper') });
    // A runtime change makes a revision (a change of public/enabled/revision alone does not:
    // revision-traffic.http.test.ts).
    const changed = agent('helper');
    changed.spec.runtime.memory = 2048;
    await t.json('/v0/agents/helper', { method: 'PUT', body: changed });
    const revisions = await t.json<{ id: string; active: boolean; trafficPercent: number }[]>(
      '/v0/agents/helper/revisions',
    );
    expect(revisions.body).toHaveLength(2);
    expect(revisions.body[0]).toMatchObject({ active: true, trafficPercent: 100 });
    expect(revisions.body[1]).toMatchObject({ active: false, trafficPercent: 0 });
    const deleted = await t.json<Envelope>('/v0/agents/helper', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('helper');
    expect(deleted.body.status).toBe('DELETING');
    expect((await t.json('/v0/agents/helper')).status).toBe(404);
    expect((await t.json('/v0/agents/helper', { method: 'DELETE' })).status).toBe(404);
  });

  it('rejects a PUT whose metadata.name differs from the path, and a PUT of a missing agent (404)', async () => {
    await t.json('/v0/agents', { method: 'POST', body: agent('helper') });
    const renamed = await t.json<ErrorBody>('/v0/agents/helper', { method: 'PUT', body: agent('other') });
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toContain('metadata.name');
    expect((await t.json('/v0/agents/ghost', { method: 'PUT', body: agent('ghost') })).status).toBe(404);
  });

  it('names the field and the allowed values for enumerations the spec leaves to the reference', async () => {
    const cases: [unknown, string, RegExp][] = [
      [
        agent('a', { triggers: [{ type: 'cron', configuration: { schedule: '* * * * *' } }] }),
        'body.spec.triggers.0.type',
        /http, http-async/,
      ],
      [
        agent('a', { triggers: [{ type: 'http', configuration: { authenticationType: 'blaxel' } }] }),
        'body.spec.triggers.0.configuration.authenticationType',
        /public, private/,
      ],
      [agent('a', { runtime: { generation: 'mk9' } }), 'body.spec.runtime.generation', /mk2, mk3/],
      [agent('a', { runtime: { memory: 64 } }), 'body.spec.runtime.memory', /at least 128/],
      [
        agent('a', { volumes: [{ name: 'data', mountPath: '/data' }] }),
        'body.spec.region',
        /required when volumes/,
      ],
    ];
    for (const [body, field, message] of cases) {
      const res = await t.json<ErrorBody>('/v0/agents', { method: 'POST', body });
      expect(res.status, field).toBe(400);
      const detail = res.body.details?.find((d) => d.field === field);
      expect(detail, `${field} in ${JSON.stringify(res.body.details)}`).toBeDefined();
      expect(detail!.message).toMatch(message);
    }
    expect(await t.store.resources.get('default', 'agent', 'a')).toBeUndefined();
  });

  it('generates a callback secret for an http-async trigger, shows it once and masks it afterwards', async () => {
    const created = await t.json<Envelope>('/v0/agents', {
      method: 'POST',
      body: agent('cb', {
        triggers: [{ type: 'http-async', configuration: { callbackUrl: 'https://hooks.example.com/x' } }],
      }),
    });
    const secret = created.body.spec.triggers[0].configuration.callbackSecret as string;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(created.body.spec.triggers[0].id).toBe('http-async-0');
    const read = await t.json<Envelope>('/v0/agents/cb');
    expect(read.body.spec.triggers[0].configuration.callbackSecret).toBe('********');
    const shown = await t.json<Envelope>('/v0/agents/cb?show_secrets=true');
    expect(shown.body.spec.triggers[0].configuration.callbackSecret).toBe(secret);
  });

  it('PUT /v0/models upserts; runtime.type names the providers; the list paginates from 2026-04-28', async () => {
    const model = (name: string, model = 'gpt-4.1') => ({
      metadata: { name },
      spec: { runtime: { type: 'openai', model }, flavors: [{ name: 'x86', type: 'cpu' }] },
    });
    const created = await t.json<Envelope>('/v0/models/gpt', { method: 'PUT', body: model('gpt') });
    expect(created.status).toBe(200);
    expect(created.body.spec.runtime.model).toBe('gpt-4.1');
    const updated = await t.json<Envelope>('/v0/models/gpt', { method: 'PUT', body: model('gpt', 'gpt-5') });
    expect(updated.body.spec.runtime.model).toBe('gpt-5');
    expect(updated.body.events).toHaveLength(2);
    const bad = await t.json<ErrorBody>('/v0/models/x', {
      method: 'PUT',
      body: { metadata: { name: 'x' }, spec: { runtime: { type: 'skynet' } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details?.[0]).toMatchObject({ field: 'body.spec.runtime.type' });
    expect(bad.body.details?.[0]?.message).toMatch(/openai, anthropic/);

    for (const name of ['m1', 'm2', 'm3']) await t.json('/v0/models', { method: 'POST', body: model(name) });
    const first = await t.json<{
      data: Envelope[];
      meta: { hasMore: boolean; nextCursor: string; total: number };
    }>('/v0/models?limit=2&sort=name:asc', { version: PAGED });
    expect(first.body.data.map((m) => m.metadata.name)).toEqual(['gpt', 'm1']);
    expect(first.body.meta).toMatchObject({ hasMore: true, total: 4 });
    const second = await t.json<{ data: Envelope[]; meta: { hasMore: boolean } }>(
      `/v0/models?limit=2&sort=name:asc&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`,
      { version: PAGED },
    );
    expect(second.body.data.map((m) => m.metadata.name)).toEqual(['m2', 'm3']);
    expect(second.body.meta.hasMore).toBe(false);
    const legacy = await t.json<Envelope[]>('/v0/models');
    expect(Array.isArray(legacy.body)).toBe(true);
    expect(legacy.body).toHaveLength(4);
  });

  it('filters lists by status (comma list, any case) and rejects an unknown status naming the allowed ones', async () => {
    await t.json('/v0/agents', { method: 'POST', body: agent('on') });
    await t.json('/v0/agents', { method: 'POST', body: agent('off', { enabled: false }) });
    // DEACTIVATING until the run plane (not running in this in-process test) stopped its replicas.
    const list = await t.json<{ data: Envelope[] }>('/v0/agents?status=deactivating,deployed', {
      version: PAGED,
    });
    expect(list.body.data.map((a) => a.metadata.name)).toEqual(['off']);
    const bad = await t.json<ErrorBody>('/v0/agents?status=RUNNING', { version: PAGED });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/query.status.*DEPLOYED/);
  });

  it('functions must name existing connections (400 naming the missing one)', async () => {
    const fn = {
      metadata: { name: 'gh' },
      spec: { type: 'mcp', integrationConnections: ['github-conn'], runtime: { type: 'mcp' } },
    };
    const missing = await t.json<ErrorBody>('/v0/functions', { method: 'POST', body: fn });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([
      {
        field: 'body.spec.integrationConnections.0',
        message: expect.stringContaining('"github-conn" does not exist'),
      },
    ]);
    await t.json('/v0/integrations/connections', {
      method: 'POST',
      body: {
        metadata: { name: 'github-conn' },
        spec: { integration: 'github', secret: { CLIENT_ID: 'id', CLIENT_SECRET: 's', REFRESH_TOKEN: 'r' } },
      },
    });
    const created = await t.json<Envelope>('/v0/functions', { method: 'POST', body: fn });
    expect(created.status).toBe(200);
    expect(created.body.spec).toMatchObject({ type: 'mcp', integrationConnections: ['github-conn'] });
    expect(created.body.spec.runtime).toMatchObject({ type: 'mcp', transport: 'http-stream' });
    const wrongTrigger = await t.json<ErrorBody>('/v0/functions', {
      method: 'POST',
      body: { metadata: { name: 'f2' }, spec: { triggers: [{ type: 'http-async' }] } },
    });
    expect(wrongTrigger.body.details?.[0]).toMatchObject({ field: 'body.spec.triggers.0.type' });
  });

  it('jobs: cron triggers need a schedule, executions are listed and fetched under the job', async () => {
    const job = (extra: Record<string, unknown> = {}) => ({
      metadata: { name: 'nightly' },
      spec: {
        runtime: {
          image: 'jobs/nightly:1',
          timeout: 600,
          maxRetries: 2,
          envs: [{ name: 'K', value: 'v', secret: true }],
        },
        ...extra,
      },
    });
    const noSchedule = await t.json<ErrorBody>('/v0/jobs', {
      method: 'POST',
      body: job({ triggers: [{ type: 'cron' }] }),
    });
    expect(noSchedule.body.details?.[0]).toMatchObject({
      field: 'body.spec.triggers.0.configuration.schedule',
    });
    const httpTrigger = await t.json<ErrorBody>('/v0/jobs', {
      method: 'POST',
      body: job({ triggers: [{ type: 'http' }] }),
    });
    expect(httpTrigger.body.details?.[0]?.message).toMatch(/must be one of cron/);
    const created = await t.json<Envelope>('/v0/jobs', {
      method: 'POST',
      body: job({ triggers: [{ type: 'cron', configuration: { schedule: '0 3 * * *' } }] }),
    });
    expect(created.status).toBe(200);
    expect(created.body.metadata.url).toBe('http://tarmac.test/default/jobs/nightly');
    expect(
      (await t.json<Envelope>('/v0/jobs/nightly?show_secrets=true')).body.spec.runtime.envs[0].value,
    ).toBe('v');
    const executions = await t.json<{ data: unknown[]; meta: { total: number } }>(
      '/v0/jobs/nightly/executions',
      { version: PAGED },
    );
    expect(executions.status).toBe(200);
    expect(executions.body).toEqual({ data: [], meta: { hasMore: false, nextCursor: '', total: 0 } });
    expect((await t.json('/v0/jobs/nightly/executions/ex-1')).status).toBe(404);
    expect((await t.json('/v0/jobs/ghost/executions')).status).toBe(404);
  });

  it('PUT /v0/applications upserts, generates a revision per write, and computes status from events', async () => {
    const app = (image: string) => ({
      metadata: { name: 'web' },
      spec: { image, envs: [{ name: 'PW', value: 'p', secret: true }] },
    });
    const created = await t.json<Envelope>('/v0/applications/web', {
      method: 'PUT',
      body: app('apps/web:1'),
    });
    expect(created.status).toBe(200);
    expect(created.body.spec).toMatchObject({ port: 8080, memory: 2048, image: 'apps/web:1' });
    expect(created.body.status).toBe(created.body.events.at(-1)?.status);
    const updated = await t.json<Envelope>('/v0/applications/web', {
      method: 'PUT',
      body: app('apps/web:2'),
    });
    expect(updated.body.spec.revisions.map((r: { image: string }) => r.image)).toEqual([
      'apps/web:2',
      'apps/web:1',
    ]);
    expect(updated.body.spec.revision.active).toBe(updated.body.spec.revisions[0].id);
    expect(updated.body.spec.revisions[0].envs[0].value).toBe('********');
    const revisions = await t.json<unknown[]>('/v0/applications/web/revisions');
    expect(revisions.body).toHaveLength(2);
    const missingImage = await t.json<ErrorBody>('/v0/applications', {
      method: 'POST',
      body: { metadata: { name: 'x' }, spec: {} },
    });
    // Spec-shaped: the image travels in spec.revisions[] (spec "Application"), so that is the field.
    expect(missingImage.body.details?.[0]?.field).toBe('body.spec.revisions');
    expect(missingImage.body.details?.[0]?.message).toMatch(/needs an entry with an image.*spec\.image/);
  });
});
