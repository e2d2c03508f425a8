import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { parsePort } from './sandboxd.js';
import { call, startDaemon, type TestDaemon } from './test-support/harness.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon();
});
afterAll(() => t.stop());

describe('sandboxd conventions (reference §1.1, §1.8)', () => {
  it('answers GET /health with status, version, uptime and the keep-alive count', async () => {
    const r = await call(t.base, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      uptimeSeconds: expect.any(Number),
      startedAt: expect.any(String),
      keepAlive: 0,
      processes: 0,
    });
  });

  it('sends CORS and no-cache headers on every response, errors included', async () => {
    for (const path of ['/health', '/nope']) {
      const r = await fetch(t.base + path);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('cache-control')).toBe('no-cache, no-store, must-revalidate');
      expect(r.headers.get('pragma')).toBe('no-cache');
      expect(r.headers.get('expires')).toBe('0');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers OPTIONS with 204 and HEAD with 200', async () => {
    expect((await fetch(`${t.base}/filesystem/x`, { method: 'OPTIONS' })).status).toBe(204);
    const head = await fetch(`${t.base}/process`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('welcomes on / for every method', async () => {
    for (const m of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await call(t.base, m, '/');
      expect(r.body).toMatchObject({
        message: expect.any(String),
        documentation: expect.any(String),
        description: expect.any(String),
      });
    }
  });

  it('404s unknown routes with {error}', async () => {
    const r = await call(t.base, 'GET', '/nope');
    expect(r).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(Object.keys(r.body)).toEqual(['error']);
  });

  it('parses --port, defaulting to 8080', () => {
    expect(parsePort([])).toBe(8080);
    expect(parsePort(['--port', '9000'])).toBe(9000);
    expect(() => parsePort(['--port', 'x'])).toThrow();
  });
});
