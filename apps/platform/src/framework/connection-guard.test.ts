// Issue 19 item 7: caps per address and in total, and the headers timeout on connections that
// never send a request, on a real HTTP server over loopback (127.0.0.2/.3 as other clients).
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionBudget } from './connection-budget.js';
import { ConnectionGuard, httpServerOptions } from './connection-guard.js';
import { parseProcLimits, raiseFileLimit } from './file-limit.js';

const open: Socket[] = [];
let server: Server | undefined;
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function listen(guard: ConnectionGuard, headersTimeoutMs = 10_000): Promise<number> {
  server = createServer(httpServerOptions(), (_req, res) => res.end('ok'));
  ConnectionGuard.applyTimeouts(server, { headersTimeoutMs, requestTimeoutMs: 0, keepAliveTimeoutMs: 5000 });
  guard.guard(server);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

/** Opens a connection from `from`; resolves true if it is still open after a moment. */
async function idle(port: number, from: string): Promise<boolean> {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  open.push(s);
  let closed = false;
  s.on('close', () => (closed = true));
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.once('connect', () => r()).once('close', () => r()));
  await new Promise((r) => setTimeout(r, 30));
  return !closed;
}

async function get(port: number, from: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    let data = '';
    s.on('data', (d) => (data += d.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    s.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
  });
}

describe('ConnectionGuard', () => {
  it('refuses connections over the per-address cap; other addresses still get through', async () => {
    const guard = new ConnectionGuard({ maxConnections: 100, maxPerAddress: 5 });
    const port = await listen(guard);
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await idle(port, '127.0.0.2'));
    expect(results).toEqual([true, true, true, true, true, false, false, false]);
    expect(await get(port, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    expect(guard.refused).toBe(3);
  });

  it('refuses connections over the total cap and admits again once some close', async () => {
    const guard = new ConnectionGuard({ maxConnections: 4, maxPerAddress: 4 });
    const port = await listen(guard);
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'])
      expect(await idle(port, from)).toBe(true);
    expect(await idle(port, '127.0.0.6')).toBe(false);
    open[0]!.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await get(port, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
  });

  it('closes a connection that sends no request head within the headers timeout', async () => {
    const guard = new ConnectionGuard({ maxConnections: 10, maxPerAddress: 10 });
    const port = await listen(guard, 300);
    const s = connect({ port, host: '127.0.0.1' });
    s.resume(); // read the 408, so the server's close reaches us
    const t0 = Date.now();
    await new Promise((r) => s.once('close', r));
    expect(Date.now() - t0).toBeLessThan(3000); // 300 ms + a 1 s check interval, with slack
    expect(guard.open()).toBe(0);
  });
});

describe('connectionBudget', () => {
  it('keeps connection descriptors under the limit minus a reserve', () => {
    for (const limit of [1024, 20_000, 1_048_576]) {
      const b = connectionBudget(limit, { maxConnections: 10_000_000, egressMaxConnections: 10_000_000 });
      const spent = 2 * b.public.maxConnections + 2 * b.egress.maxConnections;
      expect(spent).toBeLessThanOrEqual(limit - Math.max(256, limit / 4));
      expect(b.clamped).toHaveLength(2);
    }
    expect(connectionBudget(1_048_576).public).toEqual({ maxConnections: 20_000, maxPerAddress: 256 });
    expect(connectionBudget(20_000, { maxPerAddress: 50 }).public).toEqual({
      maxConnections: 5000,
      maxPerAddress: 50,
    });
  });
});

describe('raiseFileLimit', () => {
  const limits = (soft: string, hard: string) =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 ${hard}                files\n`;

  it('parses /proc limits', () => {
    expect(parseProcLimits(limits('1024', '524288'))).toEqual({ soft: 1024, hard: 524288 });
  });

  it('runs prlimit on its own pid when soft < hard and reports what is in force after', async () => {
    let text = limits('1024', '524288');
    const calls: string[][] = [];
    const result = await raiseFileLimit(
      42,
      async (cmd, args) => {
        calls.push([cmd, ...args]);
        text = limits('524288', '524288');
        return '';
      },
      async () => text,
    );
    expect(calls).toEqual([['prlimit', '--pid', '42', '--nofile=524288:524288']]);
    expect(result).toEqual({ soft: 524288, hard: 524288 });
  });

  it('assumes 1024 and says why when the limits cannot be read', async () => {
    const result = await raiseFileLimit(
      42,
      async () => '',
      async () => {
        throw new Error('ENOENT: /proc/self/limits');
      },
    );
    expect(result).toEqual({ soft: 1024, hard: 1024, error: 'ENOENT: /proc/self/limits' });
  });

  it('keeps the old limit and says why when prlimit fails', async () => {
    const result = await raiseFileLimit(
      42,
      async () => {
        throw new Error('prlimit: not found');
      },
      async () => limits('1024', '4096'),
    );
    expect(result).toEqual({ soft: 1024, hard: 4096, error: 'prlimit: not found' });
  });
});
