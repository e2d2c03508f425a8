import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxd, parsePort } from './sandboxd.js';

describe('sandboxd', () => {
  const server = createSandboxd();
  let base = '';
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('answers GET /health with status ok', async () => {
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('404s anything else', async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('parses --port, defaulting to 8080', () => {
    expect(parsePort([])).toBe(8080);
    expect(parsePort(['--port', '9000'])).toBe(9000);
    expect(() => parsePort(['--port', 'x'])).toThrow();
  });
});
