import { describe, expect, it } from 'vitest';
import { readNetworkSettings } from '../records/network-settings.js';
import { compilePolicy, decide } from './policy.js';

const policyOf = (network: unknown, connected = true) =>
  compilePolicy('sbx', readNetworkSettings(network).settings, { connected });

describe('egress decisions', () => {
  it('passes everything without rules', () => {
    expect(decide(policyOf(undefined), 'any.example.com')).toEqual({ kind: 'pass' });
  });

  it('forbidden wins over allowed, routing and bypass', () => {
    const p = policyOf({
      allowedDomains: ['*.a.com'],
      forbiddenDomains: ['x.a.com'],
      proxy: { bypass: ['x.a.com'], routing: [{ destinations: ['x.a.com'], headers: {}, secrets: {} }] },
    });
    expect(decide(p, 'x.a.com')).toEqual({
      kind: 'deny',
      reason: '"x.a.com" is refused by forbiddenDomains rule "x.a.com"',
    });
    expect(decide(p, 'y.a.com')).toEqual({ kind: 'pass' });
  });

  it('an allow list refuses other hosts; routing destinations count as allowed', () => {
    const rule = { destinations: ['api.b.com'], headers: { A: '1' }, secrets: {} };
    const p = policyOf({ proxy: { allowedDomains: ['*.a.com'], routing: [rule] } });
    expect(decide(p, 'z.com')).toEqual({
      kind: 'deny',
      reason: '"z.com" is not in the allow list (proxy.allowedDomains)',
    });
    expect(decide(p, 'api.b.com')).toMatchObject({ kind: 'route', rule: { destinations: ['api.b.com'] } });
  });

  it('bypass skips interception of a routed destination', () => {
    const p = policyOf({
      proxy: { bypass: ['*.b.com'], routing: [{ destinations: ['api.b.com'], headers: {}, secrets: {} }] },
    });
    expect(decide(p, 'api.b.com')).toEqual({ kind: 'pass' });
  });

  it('egress policies with mode allow/deny feed the lists, named in messages', () => {
    const p = policyOf({
      egress: { policies: [{ name: 'no-tracking', mode: 'deny', destinations: ['*.track.io'] }] },
    });
    expect(decide(p, 'a.track.io')).toEqual({
      kind: 'deny',
      reason: '"a.track.io" is refused by egress.policies "no-tracking" rule "*.track.io"',
    });
  });

  it('a disconnected tunnel refuses everything', () => {
    expect(decide(policyOf({}, false), 'a.com').kind).toBe('deny');
  });
});
