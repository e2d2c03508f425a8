// The idle policy's decisions and its races, on the real ReplicaSets with a clock the test moves.
// The freezer here is the two-call port (freeze, thawSync) recording what it was asked, so a race
// (a request while a freeze settles) can be staged exactly; the real cgroup freezer is the e2e's
// (tests/e2e/run/scale-to-zero.test.ts: runc shows the replica paused, then running).
import { FreezeAbortedError } from '@tarmac/engine';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { IdlePolicy, idleAction, type IdleSettings } from './idle-policy.js';
import { ReplicaSets, type Replica } from './replica-sets.js';
import type { RunRecord } from './run-ports.js';

const S: IdleSettings = { standbyAfterMs: 30_000, stopAfterMs: 900_000 };

function replica(over: Partial<Replica> = {}): Replica {
  return {
    engineId: 'rp-a-r1-0-1',
    recordId: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    revision: 'r1',
    slot: 0,
    attempt: 1,
    ip: '10.0.0.2',
    port: 8080,
    phase: 'ready',
    credentialId: 'rec.rp0',
    readyAtMs: 0,
    inflight: 0,
    lastUsedMs: 0,
    ...over,
  };
}

describe('idleAction', () => {
  it('STANDBY after the standby window, stopped after the stop window, measured from the last use', () => {
    const r = replica({ lastUsedMs: 1000 });
    expect(idleAction(r, false, 1000 + 29_999, S)).toBeUndefined();
    expect(idleAction(r, false, 1000 + 30_000, S)).toBe('standby');
    expect(idleAction({ ...r, phase: 'standby' }, false, 1000 + 899_999, S)).toBeUndefined();
    expect(idleAction({ ...r, phase: 'standby' }, false, 1000 + 900_000, S)).toBe('stop');
    // A replica whose freeze failed is still stopped on time.
    expect(idleAction(r, false, 1000 + 900_000, S)).toBe('stop');
  });

  it('never with a request in flight (streams, WebSockets), while starting or freezing, or exempt by minScale', () => {
    const now = 10_000_000;
    expect(idleAction(replica({ inflight: 1 }), false, now, S)).toBeUndefined();
    expect(idleAction(replica({ phase: 'starting' }), false, now, S)).toBeUndefined();
    expect(idleAction(replica({ freezing: true }), false, now, S)).toBeUndefined();
    expect(idleAction(replica(), true, now, S)).toBeUndefined();
  });

  it('0 turns a step off; a stop window no longer than the standby one skips STANDBY', () => {
    const r = replica();
    expect(idleAction(r, false, 10_000_000, { standbyAfterMs: 0, stopAfterMs: 0 })).toBeUndefined();
    expect(idleAction(r, false, 10_000_000, { standbyAfterMs: 30_000, stopAfterMs: 0 })).toBe('standby');
    expect(idleAction(r, false, 50_000, { standbyAfterMs: 0, stopAfterMs: 60_000 })).toBeUndefined();
    expect(idleAction(r, false, 40_000, { standbyAfterMs: 30_000, stopAfterMs: 30_000 })).toBe('stop');
    expect(idleAction(r, false, 29_000, { standbyAfterMs: 30_000, stopAfterMs: 20_000 })).toBe('stop');
    expect(idleAction(r, false, 19_000, { standbyAfterMs: 30_000, stopAfterMs: 20_000 })).toBeUndefined();
  });
});

describe('IdlePolicy', () => {
  function setup(minScale = 0) {
    let now = 0;
    const calls: string[] = [];
    const notes: string[] = [];
    const meters: string[] = [];
    let settleFreeze: ((err?: Error) => void) | undefined;
    const sets = new ReplicaSets();
    const record: RunRecord = {
      id: 'rec',
      kind: 'agent',
      workspace: 'ws',
      name: 'a',
      status: 'DEPLOYED',
      enabled: true,
      public: false,
      image: 'agents/a:1',
      memoryMB: 256,
      minScale,
      maxScale: 10,
      port: 8080,
      hosts: [],
      revision: 'r1',
      lastMessage: undefined,
    };
    let kicks = 0;
    const policy = new IdlePolicy({
      ...S,
      sets,
      engine: {
        freeze: (id) => {
          calls.push(`freeze ${id}`);
          return new Promise<void>((res, rej) => (settleFreeze = (err) => (err ? rej(err) : res())));
        },
        thawSync: (id) => void calls.push(`thaw ${id}`),
      },
      catalogue: { note: async (_r, m) => void notes.push(m) },
      dropIdle: (to) => void calls.push(`drop ${to.host}:${to.port}`),
      recordOf: () => record,
      remove: (r) => {
        calls.push(`remove ${r.engineId}`);
        sets.remove(r);
      },
      kick: () => void kicks++,
      meterPhase: (r, phase) => void meters.push(`${r.engineId} ${phase}`),
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    const set = sets.set('rec', 'r1');
    const r = replica();
    set.replicas.push(r);
    const flush = () => new Promise((res) => setImmediate(res));
    return {
      policy,
      sets,
      set,
      r,
      record,
      calls,
      notes,
      meters,
      kicks: () => kicks,
      settle: (err?: Error) => settleFreeze?.(err),
      at: (ms: number) => (now = ms),
      flush,
    };
  }

  it('freezes an idle replica (idle connections dropped first) and says so in an event', async () => {
    const t = setup();
    t.at(30_000);
    t.policy.tick();
    expect(t.calls).toEqual(['drop 10.0.0.2:8080', 'freeze rp-a-r1-0-1']);
    expect(t.r.freezing).toBe(true);
    t.policy.tick(); // a second tick while the freeze settles does not freeze again
    expect(t.calls).toHaveLength(2);
    t.settle();
    await t.flush();
    expect(t.r.phase).toBe('standby');
    expect(t.notes).toEqual(['Replica rp-a-r1-0-1 in STANDBY after 30 s idle (frozen, memory kept)']);
    expect(t.meters).toEqual(['rp-a-r1-0-1 standby']); // metering bills it as STANDBY from now
  });

  it('concurrent requests share one thaw; the replica is ready and used again', async () => {
    const t = setup();
    t.at(30_000);
    t.policy.tick();
    t.settle();
    await t.flush();
    t.at(31_000);
    const got = [1, 2, 3].map(() => t.policy.claim(t.record, t.sets.serving('rec', 'r1'), t.set));
    expect(got).toEqual([t.r, t.r, t.r]);
    expect(t.calls.filter((c) => c.startsWith('thaw'))).toEqual(['thaw rp-a-r1-0-1']);
    expect(t.meters).toEqual(['rp-a-r1-0-1 standby', 'rp-a-r1-0-1 running']);
    expect(t.r.phase).toBe('ready');
    expect(t.r.lastUsedMs).toBe(31_000);
  });

  it('a request while the freeze settles thaws it; the policy does not then call it STANDBY', async () => {
    for (const outcome of ['aborted', 'frozen'] as const) {
      const t = setup();
      t.at(30_000);
      t.policy.tick();
      expect(t.policy.claim(t.record, t.r, t.set)).toBe(t.r);
      expect(t.calls.at(-1)).toBe('thaw rp-a-r1-0-1');
      t.settle(outcome === 'aborted' ? new FreezeAbortedError('thawed while freezing') : undefined);
      await t.flush();
      expect(t.r.phase).toBe('ready');
      expect(t.r.freezing).toBe(false);
      expect(t.notes).toEqual([]);
    }
  });

  it('stops the last replica after the stop window: the set sleeps until a request wakes it', async () => {
    const t = setup();
    t.r.phase = 'standby';
    t.at(900_000);
    t.policy.tick();
    expect(t.calls).toEqual(['remove rp-a-r1-0-1']);
    expect(t.set.asleep).toBe(true);
    await t.flush();
    expect(t.notes).toEqual([
      'Replica rp-a-r1-0-1 stopped after 900 s idle (container removed, image kept); the next request starts one',
    ]);
    t.at(905_000);
    expect(t.policy.claim(t.record, undefined, t.set)).toBeUndefined();
    expect(t.set.asleep).toBe(false);
    expect(t.kicks()).toBe(1);
    expect(t.policy.claim(t.record, undefined, t.set)).toBeUndefined(); // woken once
    expect(t.kicks()).toBe(1);
    const next = replica({ engineId: 'rp-a-r1-0-2', attempt: 2 });
    t.at(905_420);
    t.policy.woke(t.record, t.set, next);
    await t.flush();
    expect(t.notes.at(-1)).toBe('Replica rp-a-r1-0-2 started for a request after scale to zero (420 ms)');
  });

  it('minScale 1: the first replica is kept running, the one above it takes both steps', async () => {
    const t = setup(1);
    const extra = replica({ engineId: 'rp-a-r1-1-1', slot: 1, ip: '10.0.0.3' });
    t.set.replicas.push(extra);
    t.at(30_000);
    t.policy.tick();
    expect(t.calls).toEqual(['drop 10.0.0.3:8080', 'freeze rp-a-r1-1-1']);
    t.settle();
    await t.flush();
    t.at(900_000);
    t.policy.tick();
    expect(t.calls.at(-1)).toBe('remove rp-a-r1-1-1');
    expect(t.set.asleep).toBeFalsy(); // slot 0 stays
    expect(t.set.replicas).toEqual([t.r]);
    expect(t.r.phase).toBe('ready');
  });

  it('a replica that cannot be resumed (container gone) is not handed out; the request waits', () => {
    const t = setup();
    t.r.phase = 'standby';
    const broken = new IdlePolicy({
      ...S,
      sets: t.sets,
      engine: {
        freeze: async () => undefined,
        thawSync: () => {
          throw new Error('ENOENT: cgroup gone');
        },
      },
      catalogue: { note: async () => undefined },
      recordOf: () => t.record,
      remove: () => undefined,
      kick: () => undefined,
      logger: pino({ level: 'silent' }),
      now: () => 0,
    });
    expect(broken.claim(t.record, t.r, t.set)).toBeUndefined();
    expect(t.r.phase).toBe('standby'); // the controller's next pass sees the exit and restarts one
  });
});
