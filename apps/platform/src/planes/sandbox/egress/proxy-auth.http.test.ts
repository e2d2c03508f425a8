// Issue 19 item 3, in process: the egress proxy picks a policy (and the secrets it injects) by the
// sandbox's proxy credentials, never by the source address or a header. Sandbox B's record holds
// a routing rule that injects B's secret; an attacker whose packets carry B's source address
// (spoofed), or who names B's id without B's password, gets 407 and the upstream sees nothing.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResourceRow } from '@tarmac/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxCredentials } from '../sandbox-credentials.js';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { LeafCertificates, createCaMaterial } from './certificate-authority.js';
import { DestinationGuard, staticLookup } from '../../../framework/destinations/destination-guard.js';
import { EgressProxy } from './proxy-server.js';
import { SandboxPolicies } from './sandbox-policies.js';

const credentials = new SandboxCredentials(new Uint8Array(32).fill(7));
const B_SECRET = 'b-secret-value-0123456789';

const row = (id: string, name: string, network: unknown) =>
  ({
    id,
    workspace: 'ws',
    name,
    spec: { network },
    system: {},
    terminatedAt: null,
  }) as unknown as ResourceRow<unknown>;

const rows: Record<string, ResourceRow<unknown>> = {
  'rec-a': row('rec-a', 'a', {}),
  'rec-b': row('rec-b', 'b', {
    proxy: {
      routing: [
        {
          destinations: ['outside.test'],
          headers: { 'x-api-key': '{{SECRET:key}}' },
          secrets: { key: B_SECRET },
        },
      ],
    },
  }),
};

describe('egress proxy identifies sandboxes by credentials (issue 19 item 3)', () => {
  let upstream: Server;
  let upstreamPort: number;
  const seen: IncomingHttpHeaders[] = [];
  let proxy: EgressProxy;
  let proxyPort: number;
  // Both sandboxes "are" 127.0.0.1 here: every request below arrives from B's source address.
  const live = [
    { id: 'rec-a', workspace: 'ws', name: 'a', ip: '127.0.0.2' },
    { id: 'rec-b', workspace: 'ws', name: 'b', ip: '127.0.0.1' },
  ];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      res.end('upstream');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamPort = (upstream.address() as AddressInfo).port;
    const policies = new SandboxPolicies({
      live: { all: () => live },
      resources: { getById: async (id) => rows[id] },
      revealNetwork: (r) => (r.spec as { network: unknown }).network,
      changes: new ChangeFeed(),
      sandboxKind: 'sandbox',
      passwordMatches: (id, pw) => credentials.egressPasswordMatches(id, pw),
    });
    proxy = new EgressProxy({
      policyFor: policies.policyFor,
      leafCertificates: new LeafCertificates(createCaMaterial(new Date())),
      // The upstream is on loopback, which the guard always refuses unless the operator opens it.
      guard: new DestinationGuard({ allowCidrs: ['127.0.0.1/32'] }),
      lookup: staticLookup({ 'outside.test': '127.0.0.1' }),
    });
    await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
    proxyPort = (proxy.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await proxy.close();
    upstream.close();
  });

  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  function viaProxy(headers: Record<string, string>): Promise<{ status: number; challenge?: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: proxyPort, path: `http://outside.test:${upstreamPort}/x`, headers },
        (res) => {
          res.resume();
          const challenge = res.headers['proxy-authenticate'];
          resolve({ status: res.statusCode ?? 0, ...(challenge ? { challenge } : {}) });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it("gives neither B's policy nor B's secret to a request from B's address without B's password", async () => {
    const attempts: Record<string, string>[] = [
      {}, // spoofed source address alone
      { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' },
      { 'proxy-authorization': basic('rec-b', 'guess') },
      { 'proxy-authorization': basic('rec-b', credentials.egressPassword('rec-a')) }, // A's password
      { 'proxy-authorization': basic('rec-b', '') },
      { 'proxy-authorization': 'Bearer whatever' },
    ];
    for (const headers of attempts) {
      expect(await viaProxy(headers), JSON.stringify(headers)).toEqual({
        status: 407,
        challenge: 'Basic realm="tarmac egress"',
      });
    }
    expect(seen).toEqual([]);
  });

  it("refuses A's own valid credentials from another sandbox's address", async () => {
    const r = await viaProxy({ 'proxy-authorization': basic('rec-a', credentials.egressPassword('rec-a')) });
    expect(r.status).toBe(407);
    expect(seen).toEqual([]);
  });

  it('serves B with its own credentials, injecting its secret upstream and stripping the credentials', async () => {
    const r = await viaProxy({ 'proxy-authorization': basic('rec-b', credentials.egressPassword('rec-b')) });
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.['x-api-key']).toBe(B_SECRET);
    expect(seen[0]?.['proxy-authorization']).toBeUndefined();
  });
});
