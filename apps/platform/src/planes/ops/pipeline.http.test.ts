// Issue "Platform core" §5 (versioning), §7 (errors) and §9 (health, readiness, request logs),
// through the real app over a real store.
import { API_VERSIONS } from '@tarmac/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type ErrorBody = {
  error: string;
  code: number;
  message: string;
  details?: { field: string; message: string }[];
};

describe.each(testDatabases(process.env))('request pipeline on $name', (db) => {
  let t: Platform;
  afterEach(async () => {
    // Dispose once: a test that failed before opening its platform must not dispose the last one again.
    const opened = t;
    t = undefined as unknown as Platform;
    await opened?.dispose();
  });

  describe('versioning (spec "Versioning")', () => {
    it('applies 2026-04-16 when Service-Version is absent and echoes the applied version', async () => {
      t = await openTestPlatform(db);
      const res = await t.request('/v0/workspaces');
      expect(res.status).toBe(200);
      expect(res.headers.get('service-version')).toBe('2026-04-16');
      expect(Array.isArray(await res.json())).toBe(true);
    });

    it('accepts each supported version, also as Blaxel-Version in any case', async () => {
      t = await openTestPlatform(db);
      for (const version of API_VERSIONS) {
        const res = await t.request('/v0/workspaces', { version });
        expect(res.status).toBe(200);
        expect(res.headers.get('service-version')).toBe(version);
        const alias = await t.request('/v0/workspaces', { headers: { 'BLAXEL-VERSION': version } });
        expect(alias.headers.get('service-version')).toBe(version);
      }
      expect(API_VERSIONS).toEqual(['2026-04-16', '2026-04-20', '2026-04-28']);
    });

    it.each(['2026-04-17', '2026-04-16.preview', 'banana', '2026-4-16', '2026-04-28 extra'])(
      'rejects %s with 400 invalid_api_version naming it and the valid versions',
      async (version) => {
        t = await openTestPlatform(db);
        for (const headers of [{ 'service-version': version }, { 'blaxel-version': version }] as Record<
          string,
          string
        >[]) {
          const res = await t.request('/v0/workspaces', { headers });
          expect(res.status).toBe(400);
          const body = (await res.json()) as ErrorBody;
          expect(body.error).toBe('invalid_api_version');
          expect(body.message).toContain(version.trim());
          for (const valid of API_VERSIONS) expect(body.message).toContain(valid);
        }
        // Before authentication: the version is checked even for a public route.
        expect(
          (await t.request('/health', { key: null, headers: { 'service-version': version } })).status,
        ).toBe(400);
      },
    );
  });

  describe('errors (spec "Errors")', () => {
    it('unknown routes are 404 in the error shape, with or without credentials', async () => {
      t = await openTestPlatform(db);
      for (const key of [undefined, null]) {
        const { status, body } = await t.json<ErrorBody>('/v0/nothing-here', key === null ? { key } : {});
        expect(status).toBe(404);
        expect(body).toMatchObject({ error: 'route_not_found', code: 404 });
        expect(body.message).toContain('/v0/nothing-here');
      }
    });

    it('a wrong method on a known path is 405 method_not_allowed with Allow from the route table', async () => {
      t = await openTestPlatform(db);
      const res = await t.request('/v0/workspaces', { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
      const body = (await res.json()) as ErrorBody;
      expect(body).toMatchObject({ error: 'method_not_allowed', code: 405 });
      expect(body.message).toContain('DELETE');
      // A path with a parameter: the methods of that path only, not of its siblings.
      const one = await t.request('/v0/workspaces/anything', { method: 'POST' });
      expect(one.status).toBe(405);
      expect(one.headers.get('allow')).toBe('DELETE, GET, HEAD, PUT');
      // Nothing was written by the refused request.
      expect((await t.request('/v0/workspaces')).status).toBe(200);
      // Unknown paths stay 404 whatever the method, without Allow.
      const unknown = await t.request('/v0/nothing-here', { method: 'DELETE' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('allow')).toBeNull();
      expect(((await unknown.json()) as ErrorBody).error).toBe('route_not_found');
    });

    it('validation errors are 400 naming the field, with details', async () => {
      t = await openTestPlatform(db);
      const { status, body } = await t.json<ErrorBody>('/v0/workspaces', {
        method: 'POST',
        body: { name: 'Not A Name!', color: 'red' },
      });
      expect(status).toBe(400);
      expect(body.error).toBe('validation_error');
      expect(body.code).toBe(400);
      const fields = body.details!.map((d) => d.field);
      expect(fields).toContain('body.name');
      expect(fields).toContain('body.color');
      expect(body.message).toContain('body.name');
      const limit = await t.json<ErrorBody>('/v0/workspaces?limit=500', { version: '2026-04-28' });
      expect(limit.status).toBe(400);
      expect(limit.body.details![0]!.field).toBe('query.limit');
      const sort = await t.json<ErrorBody>('/v0/workspaces?sort=size:asc', { version: '2026-04-28' });
      expect(sort.status).toBe(400);
      expect(sort.body.details![0]!.field).toBe('query.sort');
    });

    it('malformed JSON is 400, a wrong content type 415, a too-large body 413; nothing is written', async () => {
      t = await openTestPlatform(db);
      const malformed = await t.json<ErrorBody>('/v0/workspaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name": "broken"',
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ error: 'validation_error', code: 400 });
      expect(malformed.body.details![0]!.field).toBe('body');
      const wrongType = await t.json<ErrorBody>('/v0/workspaces', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{"name":"plain"}',
      });
      expect(wrongType.status).toBe(415);
      expect(wrongType.body.error).toBe('unsupported_media_type');
      const big = JSON.stringify({ name: 'huge', labels: { blob: 'x'.repeat(2 * 1024 * 1024) } });
      const tooLarge = await t.json<ErrorBody>('/v0/workspaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: big,
      });
      expect(tooLarge.status).toBe(413);
      // The unread body leaves the connection unusable: keep-alive clients must not reuse it.
      expect(tooLarge.headers.get('connection')).toBe('close');
      expect(tooLarge.body).toMatchObject({ error: 'payload_too_large', code: 413 });
      const names = (await t.json<{ name: string }[]>('/v0/workspaces')).body.map((w) => w.name);
      expect(names).toEqual(['default']);
    });

    it('409 on a duplicate workspace name; 403 for a member changing roles', async () => {
      t = await openTestPlatform(db);
      const dup = await t.json<ErrorBody>('/v0/workspaces', { method: 'POST', body: { name: 'default' } });
      expect(dup.status).toBe(409);
      expect(dup.body).toMatchObject({ error: 'conflict', code: 409 });
      const member = await t.addUser({ role: 'member' });
      const denied = await t.json<ErrorBody>(`/v0/users/${t.adminId}`, {
        key: member.apiKey,
        method: 'PUT',
        body: { role: 'member' },
      });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ error: 'forbidden', code: 403 });
    });

    it('a handler that throws answers 500 without a stack trace or internals; the log keeps them', async () => {
      t = await openTestPlatform(db, {
        deps: (deps) => ({
          ...deps,
          store: {
            ...deps.store,
            workspaces: {
              ...deps.store.workspaces,
              listVisible: () => Promise.reject(new Error('SELECT secret_column FROM internals')),
            },
          },
        }),
      });
      const res = await t.request('/v0/workspaces');
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: 'internal_error',
        code: 500,
        message: 'Internal server error',
      });
      expect(text).not.toMatch(/secret_column|at .*\.ts|stack/);
      const failure = t.logs.find((line) => line.msg === 'request failed');
      expect(JSON.stringify(failure)).toContain('secret_column');
    });
  });

  describe('operations (issue §9)', () => {
    it('/health and /ready answer without credentials', async () => {
      t = await openTestPlatform(db);
      expect(await (await t.request('/health', { key: null })).json()).toEqual({ status: 'ok' });
      expect(await (await t.request('/ready', { key: null })).json()).toEqual({ status: 'ok' });
    });

    it('/ready is 503 when the store does not answer', async () => {
      t = await openTestPlatform(db, {
        deps: (deps) => ({
          ...deps,
          store: { ...deps.store, ping: () => Promise.reject(new Error('down')) },
        }),
      });
      const { status, body } = await t.json<ErrorBody>('/ready', { key: null });
      expect(status).toBe(503);
      expect(body).toMatchObject({ error: 'unavailable', code: 503 });
    });

    it('logs one JSON line per request with request id, method, route, status and duration', async () => {
      t = await openTestPlatform(db);
      const res = await t.request('/v0/workspaces/default', { headers: { 'x-request-id': 'req-abc.123' } });
      expect(res.headers.get('x-request-id')).toBe('req-abc.123');
      await t.request('/v0/nope', { key: null });
      const generated = await t.request('/health', {
        key: null,
        headers: { 'x-request-id': 'bad id with spaces' },
      });
      const generatedId = generated.headers.get('x-request-id');
      expect(generatedId).toMatch(/^[0-9a-f-]{36}$/);
      const requests = t.logs.filter((line) => line.msg === 'request');
      expect(requests).toHaveLength(3);
      expect(requests[0]).toMatchObject({
        requestId: 'req-abc.123',
        method: 'GET',
        path: '/v0/workspaces/default',
        route: '/v0/workspaces/{name}',
        status: 200,
        principal: t.adminId,
        service: 'tarmac',
        level: 30,
      });
      expect(typeof requests[0]!.durationMs).toBe('number');
      expect(typeof requests[0]!.time).toBe('number');
      expect(requests[1]).toMatchObject({ method: 'GET', route: null, status: 404 });
      expect(requests[2]).toMatchObject({ requestId: generatedId, route: '/health', status: 200 });
    });
  });
});
