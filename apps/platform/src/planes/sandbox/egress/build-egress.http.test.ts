// The build proxy in process (build-egress.ts): a build's own credentials from its own address, and
// nothing else, open it; released builds are refused; the destination guard refuses private
// ranges on top of the sandboxes' refusals unless the operator's allow-list opens them; namespaces
// a crashed run left are detached at start. The namespaces themselves (engine's BridgeNetwork) are
// proven in tests/e2e/builds/build-network.test.ts: here the address is loopback's.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticLookup } from '../../../framework/destinations/destination-guard.js';
import { BuildEgress, type BuildEgressLease } from './build-egress.js';
import { LeafCertificates, createCaMaterial } from './certificate-authority.js';

function viaProxy(
  proxyUrl: string,
  target: string,
  auth?: { user: string; password: string },
): Promise<{ status: number; body: string }> {
  const proxy = new URL(proxyUrl);
  const headers: Record<string, string> = {};
  if (auth)
    headers['proxy-authorization'] =
      `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = request({ host: proxy.hostname, port: proxy.port, path: target, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const credentialsOf = (lease: BuildEgressLease) => {
  const u = new URL(lease.proxyUrl);
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
};

/** A bridge's CIDR as the proxy is told it; no bridge is made here (subnets.test.ts counts bridges). */
const BRIDGE = ['10.180.0.0', '16'].join('/');

describe('build proxy (issue 15: build steps reach the public internet only)', () => {
  const state = mkdtempSync(join(tmpdir(), 'build-egress-'));
  const detached: Array<[string, string | null]> = [];
  let upstream: Server;
  let upstreamUrl = '';
  let egress: BuildEgress;

  beforeAll(async () => {
    upstream = createServer((_req, res) => res.end('upstream'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    // What a crashed run left: detached at start.
    writeFileSync(join(state, 'build-00112233aa'), '10.180.0.9');
    egress = new BuildEgress({
      network: {
        attach: () => Promise.resolve({ ip: '127.0.0.1', netnsPath: '/run/netns/stand-in' }),
        detach: (id, ip) => {
          detached.push([id, ip]);
          return Promise.resolve();
        },
      },
      subnet: BRIDGE,
      gateway: '127.0.0.1',
      // The operator opens loopback here only so that something is reachable in process.
      allowCidrs: ['127.0.0.1/32'],
      lookup: staticLookup({ 'private.test': '192.168.4.4' }),
      extraUpstreamCa: [],
      leafCertificates: new LeafCertificates(createCaMaterial(new Date())),
      stateDir: state,
    });
    await egress.start();
  });

  afterAll(async () => {
    await egress.close();
    upstream.close();
    rmSync(state, { recursive: true, force: true });
  });

  it('removes the namespaces a crashed run left behind, at start', () => {
    expect(detached).toContainEqual(['build-00112233aa', '10.180.0.9']);
    expect(readdirSync(state)).toEqual([]);
  });

  it("answers only a build's own credentials, from its own address, while it is open", async () => {
    const lease = await egress.open();
    const own = credentialsOf(lease);
    expect(own.user).toMatch(/^build-[0-9a-f]{10}$/);
    expect(readdirSync(state)).toEqual([own.user]);
    expect((await viaProxy(lease.proxyUrl, upstreamUrl, own)).body).toBe('upstream');
    expect((await viaProxy(lease.proxyUrl, upstreamUrl)).status).toBe(407);
    expect(
      (await viaProxy(lease.proxyUrl, upstreamUrl, { ...own, password: 'x' + own.password })).status,
    ).toBe(407);
    expect(egress.policyFor('10.180.0.7', own)).toBeUndefined(); // another address
    await lease.release();
    expect((await viaProxy(lease.proxyUrl, upstreamUrl, own)).status).toBe(407);
    expect(detached.map(([id]) => id)).toContain(own.user);
    expect(readdirSync(state)).toEqual([]);
  });

  it('refuses private, link-local and bridge destinations, by address and by name', async () => {
    const lease = await egress.open();
    const own = credentialsOf(lease);
    try {
      for (const target of [
        'http://10.1.2.3/',
        'http://172.16.0.1/',
        'http://192.168.1.1/',
        'http://100.64.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.180.0.1:8080/',
        'http://[::1]:80/',
        'http://private.test/',
      ]) {
        const r = await viaProxy(lease.proxyUrl, target, own);
        expect(r.status, `${target}: ${r.body}`).toBe(403);
      }
    } finally {
      await lease.release();
    }
  });

  it('the guard: public addresses pass, private ones unless the operator allows them', () => {
    const guard = BuildEgress.guard(BRIDGE, ['10.9.0.0/16']);
    for (const a of ['203.0.113.80', '8.8.8.8', '198.51.100.2', '10.9.1.1'])
      expect(guard.blocks(a), a).toBe(false);
    for (const a of [
      '10.1.1.1',
      '172.31.0.1',
      '192.168.0.1',
      '100.100.0.1',
      '198.18.0.1',
      '127.0.0.1',
      '::ffff:10.1.1.1',
    ])
      expect(guard.blocks(a), a).toBe(true);
  });
});
