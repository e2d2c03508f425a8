import { describe, expect, it } from 'vitest';
import { validateNetworkSpec } from './validate.js';

describe('validateNetworkSpec', () => {
  it('accepts an absent or a full supported network', () => {
    expect(validateNetworkSpec(undefined)).toEqual([]);
    expect(
      validateNetworkSpec({
        allowedDomains: ['*.a.com'],
        forbiddenDomains: '["b.a.com"]',
        subnet: 'default',
        firewall: { rulesets: ['default', 'proxy'] },
        egress: { policies: [{ name: 'p', mode: 'deny', destinations: ['x.com'] }] },
        proxy: {
          allowedDomains: ['api.x.com'],
          bypass: ['*.cdn.com'],
          routing: [
            {
              destinations: ['api.x.com'],
              headers: '{"Authorization":"Bearer {{SECRET:k}}"}',
              body: { key: '{{SECRET:k}}' },
              secrets: { k: 'v' },
            },
          ],
        },
      }),
    ).toEqual([]);
  });

  it('names each bad field', () => {
    const issues = validateNetworkSpec({
      allowedDomains: ['a.*.com'],
      forbiddenDomains: 'not json',
      subnet: 'private-1',
      firewall: { rulesets: ['dedicated-ip'] },
      egress: { gateway: 'gw1', mode: 'dedicated', policies: [{ name: '', mode: 'nat', destinations: [] }] },
      proxy: {
        routing: [
          {
            destinations: [],
            headers: { 'Bad Header': 'x', Host: 'h', 'X-K': '{{SECRET:missing}}' },
            body: '[1]',
            secrets: {},
          },
        ],
      },
    });
    expect(issues.map((i) => i.path)).toEqual([
      'spec.network.forbiddenDomains',
      'spec.network.proxy.routing[0].body',
      'spec.network.allowedDomains[0]',
      'spec.network.proxy.routing[0].destinations',
      'spec.network.proxy.routing[0].headers',
      'spec.network.proxy.routing[0].headers.Host',
      'spec.network.proxy.routing[0].headers.X-K',
      'spec.network.subnet',
      'spec.network.firewall.rulesets[0]',
      'spec.network.egress.gateway',
      'spec.network.egress.mode',
      'spec.network.egress.policies[0].name',
      'spec.network.egress.policies[0].mode',
      'spec.network.egress.policies[0].destinations',
    ]);
    expect(issues.find((i) => i.path.endsWith('X-K'))?.message).toBe(
      'references {{SECRET:missing}} but spec.network.proxy.routing[0].secrets has no "missing"',
    );
    expect(issues.find((i) => i.path.endsWith('rulesets[0]'))?.message).toContain(
      'ruleset "dedicated-ip" is not supported',
    );
  });

  it('refuses a network that is not an object', () => {
    expect(validateNetworkSpec(42)).toEqual([{ path: 'spec.network', message: 'must be an object' }]);
  });
});
