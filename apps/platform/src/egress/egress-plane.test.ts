import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../shared/change-feed.js';
import { EgressPlane, gatewayAddress } from './egress-plane.js';

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
    expect(plane.ports.slice(0, 2)).toEqual([taken, taken + 1]);
    expect(statSync(join(root, 'keys', 'egress-ca.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(root, 'egress', 'ca-bundle.pem'), 'utf8')).toContain(plane.ca.ca.certPem.trim());
    const attach = {
      ensureBridge: async () => undefined,
      live: { all: () => [] },
      resources: { getById: async () => undefined, update: async () => undefined },
      secretKey: new Uint8Array(32),
      changes: new ChangeFeed(),
      runner: { run: async () => ({ code: 0, stdout: '', stderr: '' }) },
      netnsOf: (id: string) => `tarmac-${id}`,
    };
    const pending = plane.sandboxDefaults();
    await plane.start(attach);
    const url = await plane.url();
    expect(url).not.toBe(`http://127.0.0.1:${taken}`);
    expect(Number(new URL(url).port)).toBeGreaterThan(taken);
    expect((await pending).env.HTTPS_PROXY).toBe(url);

    // Same home again: the CA is loaded, not replaced.
    const again = await EgressPlane.prepare({ ...settings, port: taken });
    expect(again.ca.ca.certPem).toBe(plane.ca.ca.certPem);
  });
});
