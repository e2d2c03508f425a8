import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementApp } from './server.js';

// Through node's server, as the platform serves it: the head decides (Content-Length), and a
// chunked body is counted as it streams. In-process `app.request` takes hono's path (HTTP tests).
describe('the management body limit, served by node', () => {
  const app = createManagementApp({ logger: pino({ level: 'silent' }), maxBodyBytes: 1000 });
  app.post('/echo', async (c) => c.json({ got: ((await c.req.json()) as { s: string }).s.length }));
  app.get('/echo', (c) => c.json({ got: 0 }));
  let server: ServerType;
  let url = '';
  beforeAll(async () => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const body = (n: number) => JSON.stringify({ s: 'x'.repeat(n) });
  const chunked = (text: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // A stream: fetch sends it chunked, with no Content-Length.
      body: new ReadableStream({
        start(c) {
          const bytes = new TextEncoder().encode(text);
          for (let i = 0; i < bytes.length; i += 300) c.enqueue(bytes.subarray(i, i + 300));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);

  it('reads a body within the limit, sized or chunked, and answers a GET', async () => {
    const sized = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(900),
    });
    expect(await sized.json()).toEqual({ got: 900 });
    expect(await (await chunked(body(900))).json()).toEqual({ got: 900 });
    expect(await (await fetch(url)).json()).toEqual({ got: 0 });
  });

  it('refuses a larger body with 413, whether its length is declared or streamed', async () => {
    const sized = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(1000),
    });
    expect(sized.status).toBe(413);
    expect(await sized.json()).toMatchObject({ error: 'payload_too_large', code: 413 });
    const streamed = await chunked(body(5000));
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ error: 'payload_too_large', code: 413 });
  });
});
