// Callbacks over real HTTP on loopback: signed so a receiver verifies the raw body (and a forged
// or stale one fails), retried with backoff after failures up to `retry`, and the destination
// guard: loopback refused without the operator allow-list, and the platform's own port refused
// even with it (the attack: a callbackUrl aimed at the platform's API).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticLookup } from '../../../framework/destinations/destination-guard.js';
import { publicDestinationGuards } from '../../../framework/destinations/public-destinations.js';
import { CallbackRefused, CallbackSender } from './callback-sender.js';
import { signCallback, verifyCallback, type CallbackPayload } from './callback-signature.js';

const SECRET = 'shh-secret';
const payload = (): CallbackPayload => ({
  status_code: 200,
  response_body: '{"ok":true}',
  response_length: 11,
  timestamp: Math.floor(Date.now() / 1000),
  request_id: 'req-1',
});

describe('callback sender', () => {
  let receiver: Server;
  let port = 0;
  let failFirst = 0;
  const got: Array<{ body: string; verified: boolean; headers: Record<string, unknown> }> = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const h = (n: string) => req.headers[n] as string | undefined;
        got.push({
          body,
          verified: verifyCallback(SECRET, body, h('x-blaxel-signature'), h('x-blaxel-timestamp')),
          headers: req.headers,
        });
        res.writeHead(failFirst-- > 0 ? 500 : 204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

  const sender = (allow: string[], selfPort?: number) =>
    new CallbackSender({
      ...publicDestinationGuards(allow),
      selfPort: () => selfPort,
      resolve: staticLookup({ 'hooks.test': '127.0.0.1' }),
      backoffMs: () => 10,
    });
  const never = new AbortController().signal;

  it('signs the raw body: the receiver verifies it; both header families carry the same values', async () => {
    got.length = 0;
    failFirst = 0;
    const out = await sender(['127.0.0.1/32']).deliver(
      `http://hooks.test:${port}/cb`,
      SECRET,
      payload(),
      0,
      never,
    );
    expect(out).toMatchObject({ delivered: true, attempts: 1, status: 204 });
    expect(got[0]!.verified).toBe(true);
    expect(got[0]!.headers['x-service-signature']).toBe(got[0]!.headers['x-blaxel-signature']);
    expect(got[0]!.headers['x-service-timestamp']).toBe(got[0]!.headers['x-blaxel-timestamp']);
    expect(JSON.parse(got[0]!.body)).toMatchObject({
      status_code: 200,
      response_body: '{"ok":true}',
      request_id: 'req-1',
    });
    // What a receiver must refuse: another secret, a changed body, a stale timestamp.
    const body = got[0]!.body;
    const sig = signCallback(SECRET, body);
    const ts = String(Math.floor(Date.now() / 1000));
    expect(verifyCallback('other', body, sig, ts)).toBe(false);
    expect(verifyCallback(SECRET, `${body} `, sig, ts)).toBe(false);
    expect(verifyCallback(SECRET, body, sig, String(Number(ts) - 301))).toBe(false);
    expect(verifyCallback(SECRET, body, sig, ts)).toBe(true);
  });

  it('retries a failing receiver with backoff, up to `retry` times', async () => {
    got.length = 0;
    failFirst = 2;
    const ok = await sender(['127.0.0.1/32']).deliver(
      `http://127.0.0.1:${port}/cb`,
      SECRET,
      payload(),
      3,
      never,
    );
    expect(ok).toMatchObject({ delivered: true, attempts: 3 });
    expect(got.length).toBe(3);
    got.length = 0;
    failFirst = 5;
    const no = await sender(['127.0.0.1/32']).deliver(
      `http://127.0.0.1:${port}/cb`,
      SECRET,
      payload(),
      1,
      never,
    );
    expect(no).toMatchObject({ delivered: false, attempts: 2, reason: 'answered 500' });
    expect(got.length).toBe(2);
  });

  it('refuses loopback and internal addresses without the allow-list, the platform port always', async () => {
    got.length = 0;
    failFirst = 0;
    const plain = sender([]);
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://hooks.test:${port}/`, // a name resolving to loopback
      'http://[::1]:1/',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/',
      'http://[::ffff:127.0.0.1]:1/',
    ]) {
      await expect(plain.check(url), url).rejects.toBeInstanceOf(CallbackRefused);
      expect((await plain.deliver(url, SECRET, payload(), 3, never)).delivered, url).toBe(false);
    }
    // The allow-list opens the receiver, never the platform's own port on it.
    const allowed = sender(['127.0.0.1/32'], port);
    await expect(allowed.check(`http://127.0.0.1:${port}/v0/workspaces`)).rejects.toBeInstanceOf(
      CallbackRefused,
    );
    const refused = await allowed.deliver(`http://hooks.test:${port}/v0/x`, SECRET, payload(), 3, never);
    expect(refused).toMatchObject({ delivered: false, attempts: 1 });
    await expect(plain.check('ftp://example.com/')).rejects.toBeInstanceOf(CallbackRefused);
    expect(got).toEqual([]);
  });
});
