import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { SecretBox } from '../../../framework/secrets.js';
import { EgressPlane, gatewayAddress, SHARED_PORTS } from './egress-plane.js';

describe('egress plane', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('computes the bridge gateway address', () => {
    expect(gatewayAddress('10.200.0.0/16')).toBe('10.200.0.1');
    expect(gatewayAddress('10.202.7.9/24')).toBe('10.202.7.1');
  });

  it('creates the CA once, and takes the next port when another proxy holds the first', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tarmac-egress-plane-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const settings = {
      home: { root, keys: join(root, 'keys') },
      // Loopback stands in for the bridge here: its "gateway" is 127.0.0.1.
      subnet: '127.0.0.0/8',
      port: 0,
      resolve: {},
      extraUpstreamCa: [],
      now: new Date(),
    };
    const squatter: Server = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    cleanups.push(() => squatter.close());
    const taken = (squatter.address() as { port: number }).port;
    const plane = await EgressPlane.prepare({ ...settings, port: taken });
    cleanups.push(() => plane.close());
    expect(plane.ports[0]).toBe(taken);
    expect(plane.ports).toEqual(expect.arrayContaining(SHARED_PORTS));
    expect(statSync(join(root, 'keys', 'egress-ca.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(root, 'egress', 'ca-bundle.pem'), 'utf8')).toContain(plane.ca.ca.certPem.trim());
    const attach = {
      ensureBridge: async () => undefined,
      live: { all: () => [] },
      resources: { getById: async () => undefined, update: async () => undefined },
      secrets: new SecretBox(new Uint8Array(32)),
      changes: new ChangeFeed(),
      runner: { run: async () => ({ code: 0, stdout: '', stderr: '' }) },
      netnsOf: (id: string) => `tarmac-${id}`,
    };
    const pending = plane.sandboxDefaults();
    await plane.start(attach);
    const url = await plane.url();
    const bound = Number(new URL(url).port);
    expect(bound).not.toBe(taken);
    expect(SHARED_PORTS).toContain(bound);
    expect((await pending).env.HTTPS_PROXY).toBe(url);

    // A restart of the same home with another configured port: the CA is loaded, not replaced,
    // and the port sandboxes were given is served again (they keep their HTTP_PROXY).
    await plane.close();
    const other = createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as { port: number }).port;
    await new Promise<void>((r) => other.close(() => r()));
    const again = await EgressPlane.prepare({ ...settings, port: otherPort });
    cleanups.push(() => again.close());
    expect(again.ca.ca.certPem).toBe(plane.ca.ca.certPem);
    expect(again.ports).toContain(bound);
    await again.start(attach);
    expect(await again.url()).toBe(`http://127.0.0.1:${otherPort}`);
    // The old port answers as the proxy (a non-proxy request: 400 from the proxy itself).
    const res = await fetch(`http://127.0.0.1:${bound}/`);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-tarmac-egress')).toBe('error');
  });
});
