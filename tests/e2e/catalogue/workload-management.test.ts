// Issue 3 part B, end to end against the built platform binary: the spec's Management API rows for
// workloads — PUT /v0/models/{name}, PUT /v0/applications/{name}, GET /v0/agents/{name} with
// show_secrets (workspace admins only), GET /v0/models and /v0/agents paginated from 2026-04-28.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loose reads
const PAGED = '2026-04-28';

describe('management API: workloads against the built platform', () => {
  let p: RunningPlatform;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    init: { version?: string; token?: string } = {},
  ) => {
    const res = await p.api(path, {
      method,
      ...(init.version ? { version: init.version } : {}),
      ...(init.token ? { headers: { authorization: `Bearer ${init.token}` } } : {}),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  beforeAll(async () => {
    p = await startPlatform();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    if (p) removeHome(p.home); // issue 14 item 9: this home used to stay in /tmp
  });

  it('PUT /v0/models/{modelName} creates then replaces the model (upsert), with events and status', async () => {
    const body = (model: string) => ({
      metadata: { name: 'e2e-gpt', displayName: 'GPT' },
      spec: { runtime: { type: 'openai', model }, flavors: [{ name: 'x86', type: 'cpu' }] },
    });
    const created = await call('PUT', '/v0/models/e2e-gpt', body('gpt-4.1'));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      metadata: { name: 'e2e-gpt', displayName: 'GPT' },
      status: 'DEPLOYED', // the model gateway serves it at once (issue 18)
    });
    expect(created.body.events).toHaveLength(1);
    const replaced = await call('PUT', '/v0/models/e2e-gpt', body('gpt-5'));
    expect(replaced.status).toBe(200);
    expect(replaced.body.spec.runtime.model).toBe('gpt-5');
    expect(replaced.body.events).toHaveLength(2);
    expect(replaced.body.metadata.createdAt).toBe(created.body.metadata.createdAt);
    const invalid = await call('PUT', '/v0/models/e2e-gpt', {
      metadata: { name: 'e2e-gpt' },
      spec: { runtime: { type: 'bogus' } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toContain('body.spec.runtime.type');
  });

  it('PUT /v0/applications/{applicationName} upserts and answers events and a status computed from them', async () => {
    const created = await call('PUT', '/v0/applications/e2e-web', {
      metadata: { name: 'e2e-web' },
      spec: { image: 'apps/web:1', port: 3000, urls: [{ subdomain: 'web' }] },
    });
    expect(created.status).toBe(200);
    expect(created.body.spec).toMatchObject({ port: 3000, memory: 2048, enabled: true });
    expect(created.body.spec.revisions).toHaveLength(1);
    expect(typeof created.body.status).toBe('string');
    expect(created.body.status).toBe(created.body.events.at(-1).status);
    const updated = await call('PUT', '/v0/applications/e2e-web', {
      metadata: { name: 'e2e-web' },
      spec: { image: 'apps/web:2', port: 3000 },
    });
    expect(updated.body.spec.revisions.map((r: Json) => r.image)).toEqual(['apps/web:2', 'apps/web:1']);
  });

  it('GET /v0/agents/{agentName}: secrets masked, show_secrets=true reveals them to admins, 403 for members', async () => {
    const created = await call('POST', '/v0/agents', {
      metadata: { name: 'e2e-agent' },
      spec: {
        runtime: {
          image: 'agents/a:1',
          envs: [{ name: 'OPENAI_API_KEY', value: 'sk-e2e-secret', secret: true }],
        },
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.spec.runtime.envs[0].value).toBe('********');
    expect(created.body.status).toBe('DEPLOYING');
    // The run plane (issue 16) deploys an agent that names an image.
    expect(created.body.events.at(-1).message).toBe('Accepted; starting a replica of image agents/a:1');
    const masked = await call('GET', '/v0/agents/e2e-agent');
    expect(masked.body.spec.runtime.envs[0].value).toBe('********');
    const shown = await call('GET', '/v0/agents/e2e-agent?show_secrets=true');
    expect(shown.status).toBe(200);
    expect(shown.body.spec.runtime.envs[0].value).toBe('sk-e2e-secret');

    // A member of the workspace (a service account with the member role, via /oauth/token).
    const robot = await call('POST', '/v0/service_accounts', { name: 'e2e-robot', role: 'member' });
    expect(robot.status).toBe(200);
    const token = await fetch(`${p.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${robot.body.client_id}:${robot.body.client_secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    const jwt = ((await token.json()) as { access_token: string }).access_token;
    expect((await call('GET', '/v0/agents/e2e-agent', undefined, { token: jwt })).status).toBe(200);
    const denied = await call('GET', '/v0/agents/e2e-agent?show_secrets=true', undefined, { token: jwt });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
  });

  it('GET /v0/models and /v0/agents are paginated from 2026-04-28 and bare arrays before', async () => {
    for (const name of ['e2e-m1', 'e2e-m2', 'e2e-m3']) {
      expect(
        (await call('POST', '/v0/models', { metadata: { name }, spec: { runtime: { type: 'anthropic' } } }))
          .status,
      ).toBe(200);
    }
    for (const name of ['e2e-a1', 'e2e-a2']) {
      expect((await call('POST', '/v0/agents', { metadata: { name }, spec: {} })).status).toBe(200);
    }
    for (const [path, expected] of [
      ['/v0/models', ['e2e-gpt', 'e2e-m1', 'e2e-m2', 'e2e-m3']],
      ['/v0/agents', ['e2e-a1', 'e2e-a2', 'e2e-agent']],
    ] as const) {
      const names: string[] = [];
      let cursor = '';
      for (;;) {
        const page = await call(
          'GET',
          `${path}?limit=2&sort=name:asc${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          undefined,
          {
            version: PAGED,
          },
        );
        expect(page.status).toBe(200);
        expect(page.body.meta.total).toBe(expected.length);
        names.push(...page.body.data.map((x: Json) => x.metadata.name));
        if (!page.body.meta.hasMore) {
          expect(page.body.meta.nextCursor).toBe('');
          break;
        }
        cursor = page.body.meta.nextCursor;
      }
      expect(names).toEqual(expected);
      const legacy = await call('GET', path);
      expect(Array.isArray(legacy.body)).toBe(true);
      expect(legacy.body).toHaveLength(expected.length);
    }
  });
});
