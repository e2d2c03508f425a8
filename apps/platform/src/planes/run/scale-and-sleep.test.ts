// The autoscaler (replica-scaling.ts) and the idle policy (idle-policy.ts) on one set, the real
// ReplicaSets, Autoscaler and IdlePolicy with a clock the test moves; the engine is the two-call
// freezer port recording what it was asked (the real freezer is tests/e2e/run/scale-to-zero.test.ts).
// What the merge of the two must keep: an asleep set starts nothing until a request wakes it, a
// replica in STANDBY counts as up (no replacement started for it), and a thread pinned to a
// replica in STANDBY resumes that replica rather than moving to another.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Autoscaler } from './autoscaler.js';
import { IdlePolicy } from './idle-policy.js';
import { ReplicaSets, type Replica } from './replica-sets.js';
import { SetScaler } from './replica-scaling.js';
import { runRecord } from '../../test-support/run-record.js';

const record = runRecord();

function replicaAt(slot: number, phase: Replica['phase'] = 'ready'): Replica {
  return {
    engineId: `rp-x-r1-${slot}-1`,
    recordId: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    revision: 'r1',
    slot,
    attempt: 1,
    ip: `10.0.0.${slot + 2}`,
    port: 8080,
    phase,
    credentialId: `rec.rp${slot}`,
    readyAtMs: 0,
    inflight: 0,
    lastUsedMs: 0,
  };
}

function harness() {
  let now = 0;
  const sets = new ReplicaSets();
  const set = sets.set('rec', 'r1');
  const launched: number[] = [];
  const drained: string[] = [];
  const engine: string[] = [];
  let kicks = 0;
  const scaler = new SetScaler({
    autoscaler: new Autoscaler({
      targetConcurrency: 1,
      stableWindowMs: 10_000,
      panicWindowMs: 2_000,
      panicThreshold: 2,
      maxReplicas: 10,
    }),
    logger: pino({ level: 'silent' }),
    launch: (_r, s) => {
      const slot = sets.freeSlot('rec');
      s.launchingSlots.add(slot);
      launched.push(slot);
    },
    drainAndRemove: (r) => {
      drained.push(r.engineId);
      sets.remove(r);
    },
  });
  const idle = new IdlePolicy({
    standbyAfterMs: 30_000,
    stopAfterMs: 900_000,
    sets,
    engine: {
      freeze: async (id) => void engine.push(`freeze ${id}`),
      thawSync: (id) => void engine.push(`thaw ${id}`),
    },
    catalogue: { note: async () => undefined },
    recordOf: () => record,
    remove: (r) => {
      drained.push(r.engineId);
      sets.remove(r);
    },
    kick: () => void kicks++,
    logger: pino({ level: 'silent' }),
    now: () => now,
  });
  return {
    sets,
    set,
    scaler,
    idle,
    launched,
    drained,
    engine,
    kicks: () => kicks,
    at: (ms: number) => (now = ms),
  };
}

describe('the autoscaler and the idle policy on one set', () => {
  it('a set stopped for idleness starts nothing until a request wakes it; then one replica starts', () => {
    const h = harness();
    h.set.replicas.push(replicaAt(0));
    h.scaler.scale(record, h.set, 0);
    expect(h.launched).toEqual([]); // one replica, the floor: nothing to start
    h.at(900_000);
    h.idle.tick(); // idle for the stop window: the last replica goes, the set sleeps
    expect(h.drained).toEqual(['rp-x-r1-0-1']);
    expect(h.set.asleep).toBe(true);
    for (let t = 901_000; t < 960_000; t += 1000) h.scaler.scale(record, h.set, t);
    expect(h.launched).toEqual([]); // asleep: desired 0, not the autoscaler's floor of 1
    h.at(960_000);
    expect(h.idle.claim(record, undefined, h.set)).toBeUndefined(); // a request: held, the set wakes
    expect(h.set.asleep).toBe(false);
    expect(h.kicks()).toBe(1);
    h.scaler.scale(record, h.set, 960_000);
    expect(h.launched).toEqual([0]);
  });

  it('a replica in STANDBY counts as up: nothing starts in its place, and it proves the image', () => {
    const h = harness();
    h.set.replicas.push(replicaAt(0, 'standby'));
    for (let t = 0; t <= 20_000; t += 1000) h.scaler.scale(record, h.set, t);
    expect(h.launched).toEqual([]);
    expect(h.drained).toEqual([]);
    // minScale 2: the frozen replica is proof enough that the image starts; the second starts.
    h.scaler.scale({ ...record, minScale: 2 }, h.set, 21_000);
    expect(h.launched).toEqual([1]);
  });

  it('a thread pinned to a replica in STANDBY resumes it (not moved to another replica)', () => {
    const h = harness();
    const [a, b] = [replicaAt(0), replicaAt(1)];
    h.set.replicas.push(a, b);
    const key = 't:conversation-1';
    const home = h.sets.serving('rec', 'r1', { key, now: 0 })!;
    const other = home === a ? b : a;
    home.phase = 'standby'; // frozen by the idle policy while its thread paused
    other.inflight = 0;
    const picked = h.sets.serving('rec', 'r1', { key, now: 1000 });
    expect(picked).toBe(home);
    const got = h.idle.claim(record, picked, h.set);
    expect(got).toBe(home);
    expect(home.phase).toBe('ready');
    expect(h.engine).toEqual([`thaw ${home.engineId}`]);
    // A request without a thread prefers a ready replica to a frozen one.
    other.phase = 'ready';
    home.phase = 'standby';
    expect(h.sets.serving('rec', 'r1')).toBe(other);
  });
});
