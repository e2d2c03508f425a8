// Issue 3 part A, end to end against the built platform: the spec's Management API rows for
// sandboxes and previews (POST/GET /v0/sandboxes, POST/DELETE .../previews), with the rules they
// carry — createIfNotExist and the 409 body the vendor SDK understands, show_secrets, secret values
// encrypted in the database file, host-style URLs, preview force and tokens, pagination.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { cleanUp, json, missingCapability, startSandboxPlatform, waitSandbox } from '../sandboxes/support.js';

const missing = missingCapability();
const SECRET = 'e2e-canary-secret-51d3';
const PAGINATED = '2026-04-28';

interface Sandbox {
  metadata: { name: string; url: string; workspace: string; createdBy: string; plan: string };
  spec: { runtime: { envs: { name: string; value: string; secret?: boolean }[] } };
  status: string;
  expiresIn?: number;
  events: { type: string; status: string; revision: string }[];
}

describe('management API: sandboxes and previews against the built platform', () => {
  let p: RunningPlatform | undefined;
  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const res = await p!.api(path, {
      method,
      version: PAGINATED,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await json<T>(res) };
  };

  beforeAll(async () => {
    p = await startSandboxPlatform();
  }, 15 * 60_000);
  afterAll(async () => {
    if (missing === null) await cleanUp(p, ['e2e-web']);
    else await p?.stop();
  }, 180_000);

  it('POST /v0/sandboxes creates (200, DEPLOYING, host-style url, masked secret, expiresIn)', async () => {
    const { status, body } = await call<Sandbox>('POST', '/v0/sandboxes', {
      metadata: { name: 'e2e-web', labels: { suite: 'catalogue' } },
      spec: {
        runtime: {
          image: 'blaxel/base-image:latest',
          memory: 512,
          ports: [{ target: 3000, protocol: 'http' }],
          envs: [{ name: 'API_TOKEN', value: SECRET, secret: true }],
        },
        lifecycle: { expirationPolicies: [{ type: 'ttl-max-age', value: '1h', action: 'delete' }] },
      },
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe('DEPLOYING');
    // The '-' of the name is doubled in the host label (issue 19 item 12: unambiguous hosts).
    expect(body.metadata.url).toBe(`http://sbx-e2e--web-default.local.localhost:${p!.port}`);
    expect(body.metadata).toMatchObject({ workspace: 'default', plan: 'self-hosted' });
    expect(body.spec.runtime.envs[0]).toEqual({ name: 'API_TOKEN', value: '********', secret: true });
    expect(body.expiresIn).toBeGreaterThan(3500);
    expect(body.events[0]).toMatchObject({ status: 'DEPLOYING', revision: '1' });
  });

  it('a second POST is a 409 with code 409 (vendor SDK); createIfNotExist=true returns the live one', async () => {
    const dup = await call('POST', '/v0/sandboxes', { metadata: { name: 'e2e-web' }, spec: {} });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: 'sandbox_already_exists', code: 409, sandbox_name: 'e2e-web' });
    const again = await call<Sandbox>('POST', '/v0/sandboxes?createIfNotExist=true', {
      metadata: { name: 'e2e-web' },
      spec: {},
    });
    expect(again.status).toBe(200);
    expect(again.body.metadata.name).toBe('e2e-web');
  });

  it('GET /v0/sandboxes/{name}: masked by default, revealed with show_secrets=true (admin)', async () => {
    const masked = await call<Sandbox>('GET', '/v0/sandboxes/e2e-web');
    expect(masked.status).toBe(200);
    expect(masked.body.spec.runtime.envs[0]!.value).toBe('********');
    const shown = await call<Sandbox>('GET', '/v0/sandboxes/e2e-web?show_secrets=true');
    expect(shown.body.spec.runtime.envs[0]!.value).toBe(SECRET);
    expect((await call('GET', '/v0/sandboxes/nope')).status).toBe(404);
  });

  it('the database file alone does not contain the secret value', () => {
    const file = join(p!.home, 'tarmac.db');
    const bytes = [file, `${file}-wal`]
      .map((f) => {
        try {
          return readFileSync(f).toString('latin1');
        } catch {
          return '';
        }
      })
      .join('');
    expect(bytes).toContain('sealed:v1:');
    expect(bytes).not.toContain(SECRET);
  });

  it.skipIf(missing !== null)(
    `the controller deploys it${missing ? ` (skipped: ${missing})` : ''}`,
    async () => {
      const s = await waitSandbox(
        p!,
        'e2e-web',
        (x) => x.status === 'DEPLOYED' || x.status === 'FAILED',
        'DEPLOYED',
        120_000,
      );
      expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
    },
    180_000,
  );

  it('lists sandboxes with {data, meta} and rejects an unknown status filter', async () => {
    const list = await call<{ data: Sandbox[]; meta: { total: number; hasMore: boolean } }>(
      'GET',
      '/v0/sandboxes?limit=1',
    );
    expect(list.status).toBe(200);
    expect(list.body.data.map((s) => s.metadata.name)).toEqual(['e2e-web']);
    expect(list.body.meta).toMatchObject({ total: 1, hasMore: false });
    const bad = await call<{ message: string }>('GET', '/v0/sandboxes?status=running');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('query.status');
  });

  it('POST /v0/sandboxes/{name}/previews, force on a custom-domain conflict, tokens, DELETE', async () => {
    const created = await call<{ spec: { url: string }; metadata: Record<string, string>; status: string }>(
      'POST',
      '/v0/sandboxes/e2e-web/previews',
      { metadata: { name: 'site' }, spec: { port: 3000, public: false } },
    );
    expect(created.status).toBe(200);
    expect(created.body.metadata).toMatchObject({
      name: 'site',
      resourceName: 'e2e-web',
      resourceType: 'sandbox',
    });
    expect(created.body.spec.url).toMatch(
      new RegExp(`^http://[0-9a-f]{16}\\.local\\.preview\\.localhost:${p!.port}$`),
    );
    const domain = { port: 3000, customDomain: 'apps.example.com', prefixUrl: 'demo' };
    expect(
      (await call('POST', '/v0/sandboxes/e2e-web/previews', { metadata: { name: 'a' }, spec: domain }))
        .status,
    ).toBe(200);
    expect(
      (await call('POST', '/v0/sandboxes/e2e-web/previews', { metadata: { name: 'b' }, spec: domain }))
        .status,
    ).toBe(409);
    const forced = await call<{ spec: { url: string } }>(
      'POST',
      '/v0/sandboxes/e2e-web/previews?force=true',
      {
        metadata: { name: 'b' },
        spec: domain,
      },
    );
    expect(forced.status).toBe(200);
    expect(forced.body.spec.url).toBe(`http://demo.preview.apps.example.com:${p!.port}`);
    expect((await call('GET', '/v0/sandboxes/e2e-web/previews/a')).status).toBe(404);

    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const token = await call<{ spec: { token: string; expired: boolean } }>(
      'POST',
      '/v0/sandboxes/e2e-web/previews/site/tokens',
      { metadata: { name: 'tok' }, spec: { expiresAt } },
    );
    expect(token.status).toBe(200);
    expect(token.body.spec.token).toMatch(/^tpv_/);
    // A bare array with the read-only spec.token (issue 14 items 3 and 4).
    const tokens = await call<{ spec: { token?: string } }[]>(
      'GET',
      '/v0/sandboxes/e2e-web/previews/site/tokens',
    );
    expect(tokens.body).toHaveLength(1);
    expect(tokens.body[0]!.spec.token).toBe(token.body.spec.token);

    const deleted = await call<{ metadata: { name: string } }>(
      'DELETE',
      '/v0/sandboxes/e2e-web/previews/site',
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('site');
    expect((await call('GET', '/v0/sandboxes/e2e-web/previews/site')).status).toBe(404);
  });

  it('DELETE /v0/sandboxes/{name} answers DELETING at once', async () => {
    const deleted = await call<Sandbox>('DELETE', '/v0/sandboxes/e2e-web');
    expect(deleted.status).toBe(200);
    expect(['DELETING', 'TERMINATED']).toContain(deleted.body.status);
  });
});
