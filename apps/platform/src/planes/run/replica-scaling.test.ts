// Sizing a set (replica-scaling.ts) over the real ReplicaSets and Autoscaler; starting and
// draining containers are the controller's, recorded here: a burst starts the missing replicas at
// once (never past maxScale, starts in flight counted), a revision's first replica proves the
// image before more start, the crash backoff and a blocked image hold starts back, and a
// scale-down takes the idle replicas and never a start in flight.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Autoscaler } from './autoscaler.js';
import { beginRequest, endRequest } from './replica-load.js';
import { ReplicaSets, type Replica, type ReplicaSet } from './replica-sets.js';
import { SetScaler } from './replica-scaling.js';
import { runRecord } from '../../test-support/run-record.js';

const record = runRecord();

function harness() {
  const sets = new ReplicaSets();
  const set = sets.set('rec', 'r1');
  const launched: number[] = [];
  const drained: Replica[] = [];
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
      drained.push(r);
      sets.remove(r);
    },
  });
  /** A launch in flight becomes a ready replica. */
  const ready = (s: ReplicaSet, slot: number) => {
    s.launchingSlots.delete(slot);
    s.replicas.push(replicaAt(slot));
  };
  return { sets, set, launched, drained, scaler, ready };
}

function replicaAt(slot: number): Replica {
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
    phase: 'ready',
    credentialId: `rec.rp${slot}`,
    readyAtMs: 0,
    inflight: 0,
    lastUsedMs: 0,
  };
}

describe('sizing a replica set', () => {
  it('the first replica proves the image alone, then a burst starts the rest at once, up to maxScale', () => {
    const h = harness();
    h.scaler.scale({ ...record, minScale: 3 }, h.set, 0);
    expect(h.launched).toEqual([0]); // minScale 3, but one start until one answers
    h.scaler.scale({ ...record, minScale: 3 }, h.set, 500);
    expect(h.launched).toEqual([0]); // still starting: no second
    h.ready(h.set, 0);
    h.scaler.scale({ ...record, minScale: 3 }, h.set, 1000);
    expect(h.launched).toEqual([0, 1, 2]);
  });

  it('a burst on one replica starts two more within a pass, never a fourth; starts in flight count', () => {
    const h = harness();
    h.scaler.scale(record, h.set, 0);
    h.ready(h.set, 0);
    h.scaler.scale(record, h.set, 1000);
    expect(h.launched).toEqual([0]);
    for (let i = 0; i < 8; i++) beginRequest(h.set.replicas[0]!, 1000); // 8 in flight at target 1
    h.scaler.scale(record, h.set, 2000);
    expect(h.launched).toEqual([0, 1, 2]);
    for (let t = 3000; t <= 6000; t += 1000) h.scaler.scale(record, h.set, t);
    expect(h.launched).toEqual([0, 1, 2]); // launching ones count toward the size
    h.ready(h.set, 1);
    h.ready(h.set, 2);
    h.scaler.scale(record, h.set, 7000);
    expect(h.set.replicas).toHaveLength(3);
    expect(h.drained).toEqual([]);
  });

  it('the crash backoff and a blocked image hold starts back', () => {
    const h = harness();
    h.set.notBeforeMs = 5000;
    h.scaler.scale(record, h.set, 1000);
    expect(h.launched).toEqual([]);
    h.scaler.scale(record, h.set, 5000);
    expect(h.launched).toEqual([0]);
    const b = harness();
    b.set.blocked = 'image "agents/a:1" is not in workspace ws\'s image store';
    b.scaler.scale(record, b.set, 1000);
    expect(b.launched).toEqual([]);
  });

  it('a stable window after the burst the surplus drains: idle replicas first, highest slot first', () => {
    const h = harness();
    h.scaler.scale(record, h.set, 0);
    h.ready(h.set, 0);
    const first = h.set.replicas[0]!;
    for (let i = 0; i < 6; i++) beginRequest(first, 0); // six slow requests from t = 0 to 5 s
    h.scaler.scale(record, h.set, 1000);
    h.ready(h.set, 1);
    h.ready(h.set, 2);
    for (let t = 2000; t <= 5000; t += 1000) h.scaler.scale(record, h.set, t);
    for (let i = 0; i < 6; i++) endRequest(first, 5000);
    beginRequest(h.set.replicas[1]!, 5000); // one long stream stays, on slot 1
    for (let t = 6000; t <= 16_000; t += 1000) {
      h.scaler.scale(record, h.set, t);
      // Panic lasts a stable window (10 s) after the last burst (t = 5 s): nothing drains before.
      if (t < 15_000) expect(h.drained, `t=${t}`).toEqual([]);
    }
    // One request in flight at target 1 asks for one replica: the two idle ones go, the highest
    // slot first; the busy one stays (a victim with requests in flight would drain them first).
    expect(h.drained.map((r) => r.slot)).toEqual([2, 0]);
    expect(h.set.replicas.map((r) => r.slot)).toEqual([1]);
  });
});
