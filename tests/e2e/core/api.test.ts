// Issue "Platform core" §4-§9 end to end, against the started binary over real sockets: auth with
// API keys and JWTs (verified with the published JWKS), aliases, workspace selection and isolation,
// versioning, pagination and cursors, error shapes, OpenAPI and /docs, health and structured logs.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, tempHome, type RunningPlatform } from '../support/platform.js';
import { isolatedEnv } from './process.js';

type ErrorBody = { error: string; code: number; message: string; details?: { field: string }[] };
type Envelope<T> = { data: T[]; meta: { hasMore: boolean; nextCursor: string; total: number } };

describe('platform core API over HTTP', () => {
  const home = tempHome();
  let p: RunningPlatform;
  const json = async <T>(res: Response | Promise<Response>) => {
    const r = await res;
    return { status: r.status, headers: r.headers, body: (await r.json()) as T };
  };
  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    p.api(path, { ...init, method: 'POST', body: JSON.stringify(body) });

  beforeAll(async () => {
    p = await startPlatform({ home, env: await isolatedEnv({ TARMAC_LOG_LEVEL: 'info' }) });
  });
  afterAll(async () => {
    await p?.stop('SIGTERM');
    removeHome(home);
  });

  it('health, readiness, OpenAPI 3.1 and the reference page', async () => {
    expect(await (await fetch(`${p.url}/health`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${p.url}/ready`)).json()).toEqual({ status: 'ok' });
    const doc = (await (await fetch(`${p.url}/v0/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, object>;
      servers: { url: string }[];
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.servers[0]!.url).toBe(p.url);
    for (const path of [
      '/v0/workspaces',
      '/v0/users/{subOrEmail}',
      '/v0/service_accounts/{clientId}/api_keys',
      '/oauth/token',
    ])
      expect(doc.paths[path], path).toBeDefined();
    const docs = await fetch(`${p.url}/docs`);
    expect(docs.headers.get('content-type')).toContain('text/html');
    expect(await docs.text()).toContain('/v0/service_accounts');
  });

  it('API keys and JWTs in every header alias; JWTs verify with the published JWKS', async () => {
    for (const header of ['Authorization', 'X-Service-Authorization', 'x-blaxel-authorization']) {
      const res = await fetch(`${p.url}/v0/workspaces`, {
        headers: { [header]: `Bearer ${p.credentials.apiKey}` },
      });
      expect(res.status, header).toBe(200);
    }
    const unauthenticated = await json<ErrorBody>(fetch(`${p.url}/v0/workspaces`));
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toMatchObject({ error: 'unauthorized', code: 401 });

    const sa = await json<{ client_id: string; client_secret: string }>(
      post('/v0/service_accounts', { name: 'e2e' }),
    );
    expect(sa.status).toBe(200);
    const token = await json<{ access_token: string; refresh_token: string }>(
      fetch(`${p.url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sa.body.client_id}:${sa.body.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      }),
    );
    expect(token.status).toBe(200);
    const { payload } = await jwtVerify(
      token.body.access_token,
      createRemoteJWKSet(new URL(`${p.url}/.well-known/jwks.json`)),
    );
    expect(payload.sub).toBe(sa.body.client_id);
    const asJwt = await fetch(`${p.url}/v0/service_accounts`, {
      headers: {
        'X-Blaxel-Authorization': `Bearer ${token.body.access_token}`,
        'X-Blaxel-Workspace': 'default',
      },
    });
    expect(asJwt.status).toBe(200);
    const refreshed = await json<{ access_token: string }>(
      fetch(`${p.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: token.body.refresh_token }),
      }),
    );
    expect(refreshed.status).toBe(200);

    // A key revoked is refused on the very next request.
    const key = await json<{ id: string; apiKey: string }>(post('/v0/api_keys', { name: 'short-lived' }));
    const withKey = () =>
      fetch(`${p.url}/v0/api_keys`, { headers: { authorization: `Bearer ${key.body.apiKey}` } });
    expect((await withKey()).status).toBe(200);
    expect((await p.api(`/v0/api_keys/${key.body.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await withKey()).status).toBe(401);
  });

  it('workspace by query or header; other workspaces answer 404; several need naming', async () => {
    expect((await post('/v0/workspaces', { name: 'e2e-two' })).status).toBe(200);
    const byQuery = await p.api('/v0/users?workspace=e2e-two');
    expect(byQuery.status).toBe(200);
    const byHeader = await p.api('/v0/users', { headers: { 'X-Service-Workspace': 'e2e-two' } });
    expect(byHeader.status).toBe(200);
    const missing = await json<ErrorBody>(p.api('/v0/users?workspace=not-mine'));
    expect(missing.status).toBe(404);
    const ambiguous = await json<ErrorBody>(p.api('/v0/users'));
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error).toBe('workspace_required');
    expect((await p.api('/v0/workspaces/e2e-two', { method: 'DELETE' })).status).toBe(200);
  });

  it('versioning: default and echoed version, aliases, 400 invalid_api_version', async () => {
    expect((await p.api('/v0/workspaces')).headers.get('service-version')).toBe('2026-04-16');
    expect(
      (await p.api('/v0/workspaces', { headers: { 'Blaxel-Version': '2026-04-20' } })).headers.get(
        'service-version',
      ),
    ).toBe('2026-04-20');
    const bad = await json<ErrorBody>(p.api('/v0/workspaces', { version: '2030-01-01' }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_api_version');
    expect(bad.body.message).toContain('2030-01-01');
    expect(bad.body.message).toContain('2026-04-28');
  });

  it('pagination: envelope from 2026-04-28, bare arrays before, cursors bound and signed', async () => {
    // On policies, a list the reference names as paginated (issue 14 item 3: the others are bare).
    for (let i = 0; i < 5; i++)
      expect(
        (
          await post('/v0/policies', {
            metadata: { name: `page-${i}` },
            spec: { type: 'location', locations: [{ name: 'eu', type: 'continent' }] },
          })
        ).status,
      ).toBe(200);
    const bare = await json<unknown[]>(p.api('/v0/policies'));
    expect(Array.isArray(bare.body)).toBe(true);
    const first = await json<Envelope<{ metadata: { name: string } }>>(
      p.api('/v0/policies?limit=2', { version: '2026-04-28' }),
    );
    expect(first.body.meta).toMatchObject({ hasMore: true, total: bare.body.length });
    const cursor = encodeURIComponent(first.body.meta.nextCursor);
    const second = await json<Envelope<{ metadata: { name: string } }>>(
      p.api(`/v0/policies?limit=2&cursor=${cursor}`, { version: '2026-04-28' }),
    );
    expect(second.status).toBe(200);
    expect(second.body.data.map((s) => s.metadata.name)).not.toContain(first.body.data[0]!.metadata.name);
    const mismatch = await json<ErrorBody>(
      p.api(`/v0/policies?limit=2&sort=name:asc&cursor=${cursor}`, { version: '2026-04-28' }),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('cursor_mismatch');
    const tampered = await json<ErrorBody>(
      p.api(`/v0/policies?limit=2&cursor=${cursor}AA`, { version: '2026-04-28' }),
    );
    expect(tampered.body.error).toBe('invalid_cursor');
  });

  it('errors: unknown route, malformed JSON, wrong content type, too large, validation naming the field', async () => {
    const unknown = await json<ErrorBody>(p.api('/v0/unknown-route'));
    expect(unknown).toMatchObject({ status: 404, body: { error: 'route_not_found', code: 404 } });
    const malformed = await json<ErrorBody>(p.api('/v0/workspaces', { method: 'POST', body: '{"name":' }));
    expect(malformed.status).toBe(400);
    const wrongType = await json<ErrorBody>(
      p.api('/v0/workspaces', { method: 'POST', body: 'name=x', headers: { 'content-type': 'text/plain' } }),
    );
    expect(wrongType.status).toBe(415);
    const tooLarge = await json<ErrorBody>(
      p.api('/v0/workspaces', {
        method: 'POST',
        body: JSON.stringify({ name: 'big', displayName: 'x'.repeat(2 << 20) }),
      }),
    );
    expect(tooLarge.status).toBe(413);
    const invalid = await json<ErrorBody>(post('/v0/workspaces', { name: 'UPPER case' }));
    expect(invalid.status).toBe(400);
    expect(invalid.body.details!.map((d) => d.field)).toContain('body.name');
    for (const r of [unknown, malformed, wrongType, tooLarge, invalid])
      expect(JSON.stringify(r.body)).not.toMatch(/\bat .*\.(js|ts)/);
  });

  it('writes one structured JSON log line per request with request id, method, route, status, duration', async () => {
    const res = await p.api('/v0/workspaces/default', { headers: { 'X-Request-Id': 'e2e-log-probe' } });
    expect(res.headers.get('x-request-id')).toBe('e2e-log-probe');
    await new Promise((r) => setTimeout(r, 200));
    const lines = p
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const line = lines.find((l) => l.requestId === 'e2e-log-probe');
    expect(line).toMatchObject({
      msg: 'request',
      method: 'GET',
      route: '/v0/workspaces/{name}',
      status: 200,
      service: 'tarmac',
    });
    expect(typeof line!.durationMs).toBe('number');
    // The admin key never appears in the logs.
    const logs = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(logs).not.toContain(p.credentials.apiKey.split('.')[1]);
  });
});
