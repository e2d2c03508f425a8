import type { SandboxSpec } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import { describe, expect, it } from 'vitest';
import { sandboxExpiresAt, sandboxExpiresIn } from './sandbox-expiry.js';

const created = '2026-05-01T00:00:00.000Z';
const row = (spec: SandboxSpec, system: Record<string, unknown> = {}) =>
  ({ createdAt: created, spec, system }) as unknown as ResourceRow<SandboxSpec>;
const at = (iso: string) => new Date(iso);

describe('sandbox expiry (spec "Sandbox expiry"; reference §2.6: the first condition met wins)', () => {
  it('is undefined without ttl, expires or policies (terminatedRetention alone does not expire)', () => {
    expect(sandboxExpiresAt(row({}))).toBeUndefined();
    expect(sandboxExpiresAt(row({ lifecycle: { terminatedRetention: '5m' } }))).toBeUndefined();
    expect(sandboxExpiresIn(row({}), at(created))).toBeUndefined();
  });

  it('takes the earliest of runtime.ttl, runtime.expires and each policy', () => {
    expect(sandboxExpiresAt(row({ runtime: { ttl: '1h' } }))).toEqual(at('2026-05-01T01:00:00.000Z'));
    expect(sandboxExpiresAt(row({ runtime: { ttl: '1d', expires: '2026-05-01T00:30:00Z' } }))).toEqual(
      at('2026-05-01T00:30:00.000Z'),
    );
    const policies = (type: 'ttl-idle' | 'ttl-max-age' | 'date', value: string) =>
      row({ lifecycle: { expirationPolicies: [{ type, value, action: 'delete' }] }, runtime: { ttl: '1w' } });
    expect(sandboxExpiresAt(policies('ttl-max-age', '2d'))).toEqual(at('2026-05-03T00:00:00.000Z'));
    expect(sandboxExpiresAt(policies('date', '2026-05-02T12:00:00Z'))).toEqual(
      at('2026-05-02T12:00:00.000Z'),
    );
    expect(sandboxExpiresAt(policies('ttl-idle', '30s'))).toEqual(at('2026-05-01T00:00:30.000Z'));
  });

  it('counts ttl-idle from lastUsedAt, and expiresIn never goes negative', () => {
    const idle = row(
      { lifecycle: { expirationPolicies: [{ type: 'ttl-idle', value: '5m', action: 'delete' }] } },
      { lastUsedAt: '2026-05-01T10:00:00.000Z' },
    );
    expect(sandboxExpiresAt(idle)).toEqual(at('2026-05-01T10:05:00.000Z'));
    expect(sandboxExpiresIn(idle, at('2026-05-01T10:04:00.000Z'))).toBe(60);
    expect(sandboxExpiresIn(idle, at('2026-05-01T11:00:00.000Z'))).toBe(0);
  });
});
