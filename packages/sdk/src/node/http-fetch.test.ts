import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpTransport } from '../http/transport.js';
import { httpFetch } from './http-fetch.js';

describe('httpFetch (fetch over node:http for the CLI deploy path)', () => {
  let server: Server;
  let base = '';
  const seen: Array<{ method?: string; headers: Record<string, unknown>; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() });
        if (req.url === '/json') {
          res.setHeader('x-upload-url', 'http://u/1');
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ ok: 1 }));
        } else if (req.url === '/stream') {
          res.write('line 1\n');
          setTimeout(() => res.end('line 2\n'), 20);
        } else {
          res.statusCode = 404;
          res.end(JSON.stringify({ error: 'not_found', code: 404, message: 'Agent x not found' }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sends method, headers and a byte body; answers status, headers and JSON', async () => {
    const res = await httpFetch()(`${base}/json`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', authorization: 'Bearer k' },
      body: new Uint8Array([80, 75, 3, 4]),
    });
    expect(res.ok).toBe(true);
    expect(res.status).toBe(200);
    expect(res.headers.get('X-Upload-Url')).toBe('http://u/1');
    expect(res.headers.get('x-missing')).toBeNull();
    expect(await res.json()).toEqual({ ok: 1 });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'PUT', body: 'PK\u0003\u0004' });
    expect(last.headers).toMatchObject({ authorization: 'Bearer k', 'content-length': '4' });
  });

  it('streams the body as bytes while it arrives', async () => {
    const res = await httpFetch()(`${base}/stream`);
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      text += Buffer.from(chunk).toString();
    expect(text).toBe('line 1\nline 2\n');
  });

  it('through the SDK transport: a 404 is the typed error, a dead port a connection error', async () => {
    const transport = new HttpTransport({ fetch: httpFetch(), headers: async () => ({}) });
    await expect(transport.json({ method: 'GET', url: `${base}/nope` })).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining('Agent x not found'),
    });
    const dead = new HttpTransport({
      fetch: httpFetch(),
      headers: async () => ({}),
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    });
    await expect(dead.json({ method: 'GET', url: 'http://127.0.0.1:1/x' })).rejects.toMatchObject({
      name: 'TarmacConnectionError',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('refuses what it cannot send faithfully (a Headers object, a stream body)', async () => {
    await expect(httpFetch()(`${base}/json`, { headers: new Headers({ a: 'b' }) })).rejects.toThrow(
      /plain object/,
    );
    await expect(httpFetch()(`${base}/json`, { method: 'POST', body: new Blob(['x']) })).rejects.toThrow(
      /string or byte bodies/,
    );
  });
});
