import {
  driveInputSchema,
  previewInputSchema,
  previewTokenInputSchema,
  sandboxCreateSchema,
  sandboxUpdateSchema,
  volumeInputSchema,
} from '@tarmac/contract';
import { testDatabases } from '@tarmac/store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMalformedBodiesRejected, type BodyRoute } from './test-support/malformed-bodies.js';
import { openTestPlatform, type TestPlatform } from './test-support/platform-harness.js';

// Property (issue 3): random malformed bodies at every create/update route of sandboxes, previews,
// preview tokens, volumes and drives → 4xx naming a field, store unchanged.
const sandbox = {
  metadata: { name: 'web', displayName: 'Web', externalId: 'ext-1', labels: { a: 'b' } },
  spec: {
    region: 'local',
    runtime: {
      image: 'base:latest',
      memory: 2048,
      ports: [{ target: 3000, name: 'app', protocol: 'HTTP' }],
      envs: [{ name: 'K', value: 'v', secret: true }],
      ttl: '1h',
      extraArgs: { iptables: 'disabled' }, // 'enabled' is a 400 here (issue 14 item 8)
      terminationGracePeriodSeconds: 10,
    },
    lifecycle: {
      expirationPolicies: [{ type: 'ttl-idle', value: '5m', action: 'delete' }],
      terminatedRetention: '5m',
    },
    network: {
      firewall: { rulesets: ['default'] },
      proxy: { routing: [{ destinations: ['a.example.com'], secrets: { s: 'x' } }] },
    },
  },
};
const preview = {
  metadata: { name: 'pv', displayName: 'Preview' },
  spec: {
    port: 3000,
    public: false,
    customDomain: 'example.com',
    prefixUrl: 'app',
    ttl: '1h',
    requestHeaders: { 'X-A': 'b' },
  },
};
const volume = {
  metadata: { name: 'vol', labels: { a: 'b' } },
  spec: { size: 1024, region: 'local' }, // a template is a 400 (issue 14 item 8)
};
const drive = {
  metadata: { name: 'drv' },
  spec: { size: 10, region: 'local', permissions: [{ path: '/data', mode: 'read' }] },
};

describe.each(testDatabases(process.env))(
  'malformed bodies are rejected without side effects ($name)',
  (database) => {
    let p: TestPlatform;
    beforeAll(async () => {
      p = await openTestPlatform(database);
      // Existing resources, so that updates and child creates reach validation of their own.
      for (const [path, body] of [
        ['/v0/sandboxes', { ...sandbox, metadata: { name: 'box' } }],
        ['/v0/sandboxes/box/previews', { ...preview, metadata: { name: 'existing' }, spec: { port: 8000 } }],
        ['/v0/volumes', { ...volume, metadata: { name: 'vol' } }],
        ['/v0/drives', { ...drive, metadata: { name: 'drv' } }],
      ] as const) {
        const res = await p.request('POST', path, body);
        if (res.status !== 200) throw new Error(`setup ${path}: ${res.status} ${await res.text()}`);
      }
    });
    afterAll(async () => {
      await p.dispose();
    });

    const future = new Date(Date.now() + 86_400_000).toISOString();
    const routes: BodyRoute[] = [
      { method: 'POST', path: '/v0/sandboxes', valid: sandbox, schema: sandboxCreateSchema },
      {
        method: 'PUT',
        path: '/v0/sandboxes/box',
        valid: { ...sandbox, metadata: { name: 'box' } },
        schema: sandboxUpdateSchema,
      },
      { method: 'POST', path: '/v0/sandboxes/box/previews', valid: preview, schema: previewInputSchema },
      {
        method: 'PUT',
        path: '/v0/sandboxes/box/previews/existing',
        valid: { ...preview, metadata: { name: 'existing' } },
        schema: previewInputSchema,
      },
      {
        method: 'POST',
        path: '/v0/sandboxes/box/previews/existing/tokens',
        valid: { metadata: { name: 'tok' }, spec: { expiresAt: future } },
        schema: previewTokenInputSchema,
      },
      {
        method: 'POST',
        path: '/v0/volumes',
        valid: { ...volume, metadata: { name: 'vol2' } },
        schema: volumeInputSchema,
      },
      { method: 'PUT', path: '/v0/volumes/vol', valid: volume, schema: volumeInputSchema },
      {
        method: 'POST',
        path: '/v0/drives',
        valid: { ...drive, metadata: { name: 'drv2' } },
        schema: driveInputSchema,
      },
      { method: 'PUT', path: '/v0/drives/drv', valid: drive, schema: driveInputSchema },
    ];
    it('the property fails for a route that accepts what the schema calls malformed (it can fail)', async () => {
      // A schema stricter than the server: bodies the server takes (and stores) count as malformed.
      const stricter = volumeInputSchema.refine(() => false);
      const route: BodyRoute = {
        method: 'POST',
        path: '/v0/volumes',
        valid: { ...volume, metadata: { name: 'probe' } },
        schema: stricter,
      };
      // Only some corrupted bodies are still valid for the server (a label value changed, an
      // optional field dropped), so a random run of 30 can miss them all: a fixed seed and enough
      // runs make this check deterministic instead of failing about one run in a hundred.
      await expect(checkMalformedBodiesRejected(p, route, { numRuns: 300, seed: 20261123 })).rejects.toThrow(
        /Property failed/,
      );
    });

    for (const route of routes) {
      it(`${route.method} ${route.path}`, async () => {
        await checkMalformedBodiesRejected(p, route, { numRuns: 50 });
      }, 60_000);
    }
  },
);
