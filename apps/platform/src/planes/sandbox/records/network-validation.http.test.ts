// `spec.network` validation over HTTP (brief: "anything not supported answers 400 at create time
// rather than being ignored silently"): POST and PUT /v0/sandboxes refuse with 400 naming the
// field, and nothing is stored.
import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';

const sandbox = (name: string, network?: unknown) => ({
  metadata: { name },
  spec: { runtime: { image: 'base:latest', memory: 512 }, ...(network === undefined ? {} : { network }) },
});

describe.each(testDatabases(process.env))('spec.network validation ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('accepts a supported network and refuses an unsupported one with 400 naming the field', async () => {
    const ok = await p.call(
      'POST',
      '/v0/sandboxes',
      sandbox('ok', {
        forbiddenDomains: ['*.evil.test'],
        firewall: { rulesets: ['default'] },
        proxy: {
          routing: [{ destinations: ['api.x.test'], headers: { A: '{{SECRET:k}}' }, secrets: { k: 'v' } }],
        },
      }),
    );
    expect(ok.status).toBe(200);

    const cases: [unknown, string][] = [
      [{ firewall: { rulesets: ['dedicated-ip'] } }, 'spec.network.firewall.rulesets.0'],
      [{ egress: { mode: 'dedicated' } }, 'spec.network.egress.mode'],
      [{ allowedDomains: ['a.*.test'] }, 'spec.network.allowedDomains.0'],
      [
        { proxy: { routing: [{ destinations: ['x.test'], headers: { A: '{{SECRET:nope}}' } }] } },
        'spec.network.proxy.routing.0.headers.A',
      ],
      [
        { proxy: { routing: [{ destinations: ['x.test'], body: 'not json' }] } },
        'spec.network.proxy.routing.0.body',
      ],
    ];
    for (const [network, field] of cases) {
      const res = await p.call('POST', '/v0/sandboxes', sandbox('bad', network));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect((await p.call('GET', '/v0/sandboxes/bad')).status).toBe(404);

    const put = await p.call('PUT', '/v0/sandboxes/ok', sandbox('ok', { egress: { gateway: 'gw-1' } }));
    expect(put.status).toBe(400);
    expect(JSON.stringify(put.body)).toContain('spec.network.egress.gateway');
    const still = await p.call('GET', '/v0/sandboxes/ok');
    expect(still.body.spec.network.forbiddenDomains).toEqual(['*.evil.test']);
  });
});
