import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { probeUntilReady, tcpAnswers } from './readiness.js';

describe('readiness (TCP on PORT)', () => {
  it('is ready once the port accepts, not before', async () => {
    const server = createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    expect(await tcpAnswers('127.0.0.1', port, 500)).toBe(true);
    await new Promise<void>((r) => server.close(() => r()));
    expect(await tcpAnswers('127.0.0.1', port, 500)).toBe(false);
    // Starts listening later: the probe waits for it.
    setTimeout(() => server.listen(port, '127.0.0.1'), 300);
    const out = await probeUntilReady({ host: '127.0.0.1', port, deadlineMs: 5000, gone: () => false });
    expect(out).toBe('ready');
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('stops when the container is gone, or at the deadline', async () => {
    const port = 9; // discard: nothing listens on loopback here
    expect(await probeUntilReady({ host: '127.0.0.1', port, deadlineMs: 5000, gone: () => true })).toBe(
      'gone',
    );
    const started = Date.now();
    expect(await probeUntilReady({ host: '127.0.0.1', port, deadlineMs: 400, gone: () => false })).toBe(
      'timeout',
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
