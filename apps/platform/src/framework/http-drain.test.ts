import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { drainOnClose } from './http-drain.js';

async function listening(handler: Parameters<typeof createServer>[1] = (_req, res) => res.end('ok')) {
  const server = createServer(handler);
  const close = drainOnClose(server, 500);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, close, port: typeof address === 'object' && address ? address.port : 0 };
}

describe('drainOnClose', () => {
  it('does not wait for a connection whose request headers never completed', async () => {
    const { close, port } = await listening();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await close();
    expect(Date.now() - t0).toBeLessThan(300);
  });

  it('lets a request in flight finish, then closes', async () => {
    const { close, port } = await listening((_req, res) => setTimeout(() => res.end('done'), 200));
    const body = new Promise<string>((resolve, reject) => {
      request({ port, host: '127.0.0.1', path: '/' }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });
    await new Promise((r) => setTimeout(r, 50));
    await close();
    expect(await body).toBe('done');
  });

  it('cuts a request still running after the grace period', async () => {
    const { close, port } = await listening(() => undefined); // never answers
    const failed = new Promise<boolean>((resolve) => {
      request({ port, host: '127.0.0.1', path: '/' }, () => resolve(false))
        .on('error', () => resolve(true))
        .end();
    });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await close();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(await failed).toBe(true);
  });
});
