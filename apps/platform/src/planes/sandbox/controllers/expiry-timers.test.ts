// Expiry timers fire on time (not on a sweep), and ttl-idle moves with in-memory use.
import { describe, expect, it } from 'vitest';
import { ExpiryTimers } from './expiry-timers.js';
import { LiveSandboxes } from './live-sandboxes.js';
import type { SandboxRow } from '../records/sandbox-record.js';

function row(spec: SandboxRow['spec'], createdAt = new Date().toISOString()): SandboxRow {
  return {
    id: 'r1',
    workspace: 'ws',
    kind: 'sandbox',
    parent: '',
    name: 'box',
    displayName: null,
    externalId: null,
    labels: {},
    spec,
    status: 'DEPLOYED',
    state: 'RUNNING',
    system: {},
    events: [],
    revision: 1,
    createdAt,
    updatedAt: createdAt,
    createdBy: 't',
    updatedBy: 't',
    terminatedAt: null,
  };
}

describe('ExpiryTimers', () => {
  it('fires a ttl within tens of milliseconds of its time', async () => {
    const live = new LiveSandboxes();
    const fired: number[] = [];
    const timers = new ExpiryTimers({ live, expire: async () => void fired.push(Date.now()) });
    const start = Date.now();
    timers.track(row({ runtime: { ttl: '1s' } }, new Date(start).toISOString()));
    await new Promise((r) => setTimeout(r, 1500));
    expect(fired).toHaveLength(1);
    expect(fired[0]! - start).toBeGreaterThanOrEqual(990);
    // Slack for other test files sharing the cores; a timer polled by a sweep would be seconds late.
    expect(fired[0]! - start).toBeLessThan(1300);
  });

  it('re-arms a ttl-idle timer when the sandbox was used since it was armed', async () => {
    const live = new LiveSandboxes();
    const entry = {
      id: 'r1',
      workspace: 'ws',
      name: 'box',
      engineId: 'e',
      ip: '10.0.0.2',
      state: 'RUNNING' as const,
      lastUsedMs: Date.now(),
      bootedMs: 0,
      lastUsedWrittenMs: 0,
      inflight: 0,
      freezing: false,
    };
    live.add(entry);
    const fired: number[] = [];
    const timers = new ExpiryTimers({ live, expire: async () => void fired.push(Date.now()) });
    const start = Date.now();
    timers.track(
      row({ lifecycle: { expirationPolicies: [{ type: 'ttl-idle', value: '1s', action: 'delete' }] } }),
    );
    await new Promise((r) => setTimeout(r, 600));
    entry.lastUsedMs = Date.now(); // a request at +600 ms
    await new Promise((r) => setTimeout(r, 700));
    expect(fired).toHaveLength(0); // +1300 ms: idle only 700 ms
    await new Promise((r) => setTimeout(r, 500));
    expect(fired).toHaveLength(1);
    expect(fired[0]! - start).toBeGreaterThanOrEqual(1590);
    timers.stop();
  });

  it('has no timer without an expiry, and none once disarmed', async () => {
    const fired: number[] = [];
    const timers = new ExpiryTimers({ live: new LiveSandboxes(), expire: async () => void fired.push(1) });
    timers.track(row({}));
    timers.track({ ...row({ runtime: { ttl: '1s' } }), id: 'r2' });
    timers.disarm('r2');
    await new Promise((r) => setTimeout(r, 1200));
    expect(fired).toEqual([]);
  });
});
