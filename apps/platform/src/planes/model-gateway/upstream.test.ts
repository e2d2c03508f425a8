import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationGuard } from '../../framework/destinations/destination-guard.js';
import { GatewayError } from './gateway-error.js';
import { Cancellation, retryAfterMs, Upstream, type UpstreamOptions } from './upstream.js';

let server: Server;
let port = 0;
let script: Array<{ status: number; retryAfter?: string; hang?: boolean; big?: number }> = [];
let seen = 0;
let closedEarly = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen++;
    const step = script.shift() ?? { status: 200 };
    if (step.hang) {
      res.once('close', () => closedEarly++);
      return; // never answers
    }
    if (step.big) {
      // `big` chunks of 64 KiB, each filled with its index: order and completeness are checkable.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'set-cookie': ['a=1', 'b=2'] });
      let i = 0;
      const more = () => {
        while (i < step.big!)
          if (!res.write(Buffer.alloc(65_536, i++ % 251))) return void res.once('drain', more);
        res.end();
      };
      return more();
    }
    if (step.retryAfter) res.setHeader('retry-after', step.retryAfter);
    res.statusCode = step.status;
    res.end(`{"n":${seen}}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  port = typeof a === 'object' && a ? a.port : 0;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const sleeps: number[] = [];
const upstream = (o: Partial<UpstreamOptions> = {}) =>
  new Upstream({
    guard: new DestinationGuard({ allowCidrs: ['127.0.0.1/32'] }),
    strictGuard: new DestinationGuard(),
    selfPort: () => undefined,
    retries: 2,
    maxRetryDelayMs: 1000,
    timeoutMs: 2000,
    sleep: async (ms) => void sleeps.push(ms),
    ...o,
  });
const req = () => ({ url: new URL(`http://127.0.0.1:${port}/x`), method: 'POST', headers: {}, body: '{}' });

describe('Upstream', () => {
  it('retries 429 and 5xx, honouring Retry-After, and returns the first success', async () => {
    script = [{ status: 429, retryAfter: '0.25' }, { status: 503 }, { status: 200 }];
    seen = 0;
    sleeps.length = 0;
    const u = upstream();
    const res = await u.send(req(), new AbortController().signal);
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(seen).toBe(3);
    expect(sleeps[0]).toBe(250);
    u.close();
  });

  it('returns the last failure after the retries, and a Retry-After over the bound at once', async () => {
    script = [{ status: 500 }, { status: 500 }, { status: 500 }];
    seen = 0;
    const u = upstream();
    const last = await u.send(req(), new AbortController().signal);
    await last.body.dump();
    expect([last.statusCode, seen]).toEqual([500, 3]);
    script = [{ status: 429, retryAfter: '60' }];
    seen = 0;
    const now = await u.send(req(), new AbortController().signal);
    await now.body.dump();
    expect([now.statusCode, seen]).toEqual([429, 1]);
    u.close();
  });

  it('times out a silent provider with 504 and cancels the request when the caller aborts', async () => {
    script = [{ status: 0, hang: true }];
    const u = upstream({ timeoutMs: 200, retries: 0 });
    const err = await u.send(req(), new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(504);

    await new Promise((r) => setTimeout(r, 100)); // the timed-out request's close lands first
    script = [{ status: 0, hang: true }];
    closedEarly = 0;
    const controller = new AbortController();
    const pending = upstream({ retries: 0 })
      .send(req(), controller.signal)
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(1); // the provider saw the connection go

    // The gateway's own Cancellation (model-gateway.ts: the caller's connection closed) does the same.
    script = [{ status: 0, hang: true }];
    const cancel = new Cancellation();
    const held = upstream({ retries: 0 })
      .send(req(), cancel)
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    cancel.cancel();
    await held;
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(2);
    u.close();
  });

  it('streams a large body in order through backpressure; text reads it whole; dump drains it; cancelling ends the read', async () => {
    const u = upstream({ retries: 0 });
    script = [{ status: 200, big: 64 }]; // 4 MiB: far past the reader's high-water mark
    const res = await u.send(req(), new AbortController().signal);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    let bytes = 0;
    let inOrder = true;
    for await (const chunk of res.body) {
      for (let k = 0; k < chunk.length; k += 4096)
        if (chunk[k] !== Math.floor((bytes + k) / 65_536) % 251) inOrder = false;
      bytes += chunk.length;
      if (bytes % (1024 * 1024) < chunk.length) await new Promise((r) => setTimeout(r, 20)); // a slow reader
    }
    expect([bytes, inOrder]).toEqual([64 * 65_536, true]);

    script = [{ status: 200, big: 64 }];
    expect((await (await u.send(req(), new AbortController().signal)).body.text()).length).toBe(64 * 65_536);
    script = [{ status: 200, big: 16 }];
    await (await u.send(req(), new AbortController().signal)).body.dump();
    script = [{ status: 200 }];
    expect(await (await u.send(req(), new AbortController().signal)).body.text()).toMatch(/^\{"n":/);

    script = [{ status: 200, big: 64 }];
    const controller = new AbortController();
    const cut = await u.send(req(), controller.signal);
    const read = (async () => {
      for await (const _ of cut.body) controller.abort();
    })();
    await expect(read).rejects.toThrow(/closed the request/);
    u.close();
  });

  it('refuses loopback without the allow-list, by literal and by name, and the platform port always', async () => {
    const strict = upstream({ guard: new DestinationGuard(), retries: 0 });
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:7f00:1]']) {
      const err = await strict
        .send({ ...req(), url: new URL(`http://${host}:${port}/x`) }, new AbortController().signal)
        .catch((e: unknown) => e);
      expect((err as GatewayError).status, host).toBe(403);
    }
    const self = upstream({ selfPort: () => port, retries: 0 });
    const err = await self.send(req(), new AbortController().signal).catch((e: unknown) => e);
    expect((err as GatewayError).code).toBe('upstream_address_refused');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});
