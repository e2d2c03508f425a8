import { describe, expect, it } from 'vitest';
import { released, type LiveSandbox } from './live-sandboxes.js';

const entry = (): LiveSandbox => ({
  id: 'r',
  workspace: 'ws',
  name: 'n',
  engineId: 'sb-r',
  ip: '10.0.0.2',
  state: 'RUNNING',
  lastUsedMs: 1000,
  bootedMs: 0,
  lastUsedWrittenMs: 1000,
  inflight: 0,
  freezing: false,
});

describe('released', () => {
  it('marks the use and runs whenIdle once, after the exchange, when the last request leaves', async () => {
    const e = entry();
    let ran = 0;
    e.whenIdle = () => ran++;
    e.inflight = 2;
    released(e, 2000);
    expect(e.lastUsedMs).toBe(2000);
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(0); // one still in flight
    released(e, 1500); // an older clock reading never moves lastUsed back
    expect(e.lastUsedMs).toBe(2000);
    expect(ran).toBe(0); // not on the path of the request that just ended
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(1);
    e.inflight = 1;
    released(e, 3000);
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(1); // taken: once per arming
    expect(e.whenIdle).toBeUndefined();
  });
});
