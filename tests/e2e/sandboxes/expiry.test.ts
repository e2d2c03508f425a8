// Issue 4 "Expiry": runtime.ttl, runtime.expires and each lifecycle.expirationPolicies type
// (ttl-idle, ttl-max-age, date; action delete) delete the sandbox within about a second of its
// time; expiresIn is present only when one is configured and counts down truthfully.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  getSandbox,
  missingCapability,
  sbx,
  startSandboxPlatform,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing !== null)(`sandbox expiry${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const names = ['plain', 'ttl', 'expires', 'maxage', 'date', 'idle'];

  beforeAll(async () => {
    p = await startSandboxPlatform({ env: { TARMAC_STANDBY_AFTER: '60s' } });
  }, 15 * 60_000);

  afterAll(() => cleanUp(p, names), 120_000);

  /** Resolves with the time TERMINATED was first seen (Date.now ms). */
  async function terminatedAt(name: string, ms: number): Promise<number> {
    await waitSandbox(
      p!,
      name,
      (s) => s.status === 'TERMINATED' || s.status === 'DELETING',
      `${name} expired`,
      ms,
    );
    const seen = Date.now();
    const s = await waitSandbox(p!, name, (x) => x.status === 'TERMINATED', `${name} TERMINATED`, 30_000);
    expect(s.events.map((e) => e.type)).toContain('Expired');
    return seen;
  }

  it('has no expiresIn without ttl, expires or lifecycle', async () => {
    const s = await createSandbox(p!, 'plain');
    expect(s.expiresIn).toBeUndefined();
  });

  it('runtime.ttl deletes the sandbox on time, and expiresIn counts down', async () => {
    const created = Date.now();
    const s = await createSandbox(p!, 'ttl', {}, { ttl: '6s' });
    expect(s.expiresIn).toBeGreaterThan(0);
    expect(s.expiresIn).toBeLessThanOrEqual(6);
    await sleep(1500);
    const later = await getSandbox(p!, 'ttl');
    expect(later.expiresIn).toBeLessThan(s.expiresIn!);
    const at = await terminatedAt('ttl', 15_000);
    expect(at - created).toBeGreaterThanOrEqual(5500);
    expect(at - created).toBeLessThan(6000 + 1500);
  });

  it('runtime.expires (a date) and the date policy fire at the date', async () => {
    const due = Date.now() + 6000;
    await createSandbox(p!, 'expires', {}, { expires: new Date(due).toISOString() });
    await createSandbox(p!, 'date', {
      lifecycle: {
        expirationPolicies: [{ type: 'date', value: new Date(due).toISOString(), action: 'delete' }],
      },
    });
    const [a, b] = await Promise.all([terminatedAt('expires', 15_000), terminatedAt('date', 15_000)]);
    for (const at of [a, b]) expect(Math.abs(at - due)).toBeLessThan(1500);
  });

  it('ttl-max-age counts from creation regardless of use', async () => {
    const created = Date.now();
    await createSandbox(p!, 'maxage', {
      lifecycle: { expirationPolicies: [{ type: 'ttl-max-age', value: '6s', action: 'delete' }] },
    });
    const at = await terminatedAt('maxage', 15_000);
    expect(at - created).toBeLessThan(7500);
  });

  it('ttl-idle moves with use: a used sandbox lives on, an unused one expires', async () => {
    await createSandbox(p!, 'idle', {
      lifecycle: { expirationPolicies: [{ type: 'ttl-idle', value: '4s', action: 'delete' }] },
    });
    const t0 = Date.now();
    for (let i = 0; i < 6; i++) {
      expect((await sbx(p!, 'idle', '/health')).status).toBe(200);
      await sleep(1000);
    }
    expect((await getSandbox(p!, 'idle')).status).toBe('DEPLOYED'); // 6 s > 4 s, but it was used
    const lastUse = Date.now() - 1000;
    const at = await terminatedAt('idle', 15_000);
    expect(at - lastUse).toBeGreaterThanOrEqual(3500);
    expect(at - lastUse).toBeLessThan(4000 + 1500);
    expect(at - t0).toBeGreaterThan(6000);
  });
});
