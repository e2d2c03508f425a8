// Thread stickiness (replica-affinity.ts) through ReplicaSets, and the in-flight measure the
// autoscaler reads (replica-load.ts): a thread stays on its replica while it lives, scaling up
// does not move it, a removed replica re-maps its threads; rendezvous spreads new threads and
// agrees with itself without the table (a restart); a client making up thread ids cannot grow
// the table past its bound (the attack); short requests count as their average, not a snapshot.
import { describe, expect, it } from 'vitest';
import { affinityKey, rendezvous, sessionKeyOf, ThreadPins } from './replica-affinity.js';
import { beginRequest, endRequest, takeArea } from './replica-load.js';
import { ReplicaSets, type Replica } from './replica-sets.js';
import { scaleDownOrder } from './replica-scaling.js';

function replica(slot: number, over: Partial<Replica> = {}): Replica {
  return {
    engineId: `rp-abc-r1-${slot}-${slot + 1}`,
    recordId: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    revision: 'r1',
    slot,
    attempt: slot + 1,
    ip: `10.0.0.${slot + 2}`,
    port: 8080,
    phase: 'ready',
    credentialId: `rec.rp${slot}`,
    readyAtMs: 0,
    inflight: 0,
    lastUsedMs: 0,
    ...over,
  };
}

function setWith(n: number): { sets: ReplicaSets; replicas: Replica[] } {
  const sets = new ReplicaSets();
  const replicas = Array.from({ length: n }, (_, i) => replica(i));
  sets.set('rec', 'r1').replicas.push(...replicas);
  return { sets, replicas };
}

const at = (key: string, now = 1000) => ({ key, now });

describe('affinity keys', () => {
  it('X-Service-Thread-Id, its alias X-Blaxel-Thread-Id, else Mcp-Session-Id; none without', () => {
    expect(affinityKey({ 'x-service-thread-id': 't1', 'mcp-session-id': 's' })).toBe('t:t1');
    expect(affinityKey({ 'x-blaxel-thread-id': 't1' })).toBe('t:t1');
    expect(affinityKey({ 'mcp-session-id': 's1' })).toBe('m:s1');
    expect(affinityKey({ 'x-service-thread-id': '' })).toBeUndefined();
    expect(affinityKey({})).toBeUndefined();
    expect(sessionKeyOf({ 'mcp-session-id': 's1' })).toBe('m:s1');
  });

  it('a huge header is hashed down to a bounded key', () => {
    const key = affinityKey({ 'x-service-thread-id': 'x'.repeat(10_000) })!;
    expect(key.length).toBeLessThan(40);
    expect(affinityKey({ 'x-service-thread-id': 'x'.repeat(10_000) })).toBe(key);
    expect(affinityKey({ 'x-service-thread-id': 'x'.repeat(10_001) })).not.toBe(key);
  });
});

describe('thread stickiness across replicas', () => {
  it('a thread stays on one replica; threads spread over the replicas', () => {
    const { sets, replicas } = setWith(3);
    const home = new Map<string, string>();
    for (let i = 0; i < 60; i++) home.set(`t${i}`, sets.ready('rec', 'r1', at(`t:t${i}`))!.engineId);
    for (let round = 0; round < 3; round++) {
      for (const [t, id] of home) {
        // Load does not move a thread: its replica is the busiest one now.
        for (const r of replicas) r.inflight = r.engineId === id ? 50 : 0;
        expect(sets.ready('rec', 'r1', at(`t:${t}`))!.engineId).toBe(id);
      }
    }
    const perReplica = replicas.map((r) => [...home.values()].filter((id) => id === r.engineId).length);
    expect(Math.min(...perReplica)).toBeGreaterThan(5); // 60 threads over 3: none starved
  });

  it('scaling up does not move a thread; a removed replica re-maps only its own threads', () => {
    const { sets, replicas } = setWith(2);
    const before = new Map<string, string>();
    for (let i = 0; i < 40; i++) before.set(`t${i}`, sets.ready('rec', 'r1', at(`t:t${i}`))!.engineId);
    const added = replica(2);
    sets.set('rec', 'r1').replicas.push(added);
    for (const [t, id] of before) expect(sets.ready('rec', 'r1', at(`t:${t}`, 2000))!.engineId).toBe(id);
    // Without the table, rendezvous over three would have moved about a third of them.
    const moved = [...before].filter(
      ([t, id]) => rendezvous(`t:${t}`, [...replicas, added])!.engineId !== id,
    );
    expect(moved.length).toBeGreaterThan(0);
    // Slot 0 goes: its threads land elsewhere (and stay there); the others do not move.
    sets.remove(replicas[0]!);
    for (const [t, id] of before) {
      const now = sets.ready('rec', 'r1', at(`t:${t}`, 3000))!.engineId;
      if (id === replicas[0]!.engineId) expect(now).not.toBe(id);
      else expect(now).toBe(id);
      expect(sets.ready('rec', 'r1', at(`t:${t}`, 4000))!.engineId).toBe(now);
    }
  });

  it('a starting replica takes no thread; without a key the least busy ready replica is chosen', () => {
    const { sets, replicas } = setWith(3);
    replicas[1]!.phase = 'starting';
    for (let i = 0; i < 20; i++) {
      expect(sets.ready('rec', 'r1', at(`t:t${i}`))!.engineId).not.toBe(replicas[1]!.engineId);
    }
    replicas[0]!.inflight = 3;
    replicas[2]!.inflight = 1;
    expect(sets.ready('rec', 'r1')!.engineId).toBe(replicas[2]!.engineId);
  });

  it('an MCP session made by a replica is pinned to it (learnt from its answer)', () => {
    const { sets, replicas } = setWith(3);
    const key = 'm:session-1';
    const chosen = rendezvous(key, replicas)!;
    const other = replicas.find((r) => r !== chosen)!;
    sets.pin(other, key, 1000);
    expect(sets.ready('rec', 'r1', at(key))!.engineId).toBe(other.engineId);
  });

  it('rendezvous agrees with itself: the same replicas give the same home (a restarted platform)', () => {
    const { replicas } = setWith(4);
    const shuffled = [replicas[2]!, replicas[0]!, replicas[3]!, replicas[1]!];
    for (let i = 0; i < 50; i++) expect(rendezvous(`t:${i}`, shuffled)).toBe(rendezvous(`t:${i}`, replicas));
  });

  it('attack: made-up thread ids cannot grow the table past its bound, and pins expire', () => {
    const { replicas } = setWith(2);
    const pins = new ThreadPins(100, 60_000);
    for (let i = 0; i < 10_000; i++) pins.pick(`t:flood-${i}`, replicas, 1000);
    expect(pins.size).toBe(100);
    // A thread pushed out still lands where rendezvous puts it (its replica, the set unchanged).
    const home = pins.pick('t:real', replicas, 1000)!;
    for (let i = 0; i < 500; i++) pins.pick(`t:more-${i}`, replicas, 1000);
    expect(pins.pick('t:real', replicas, 2000)).toBe(rendezvous('t:real', replicas));
    expect(home).toBe(rendezvous('t:real', replicas));
    // An expired pin no longer counts toward its replica, nor holds a thread there.
    const fresh = new ThreadPins(100, 60_000);
    fresh.pin('t:old', replicas[1]!, 0);
    fresh.pin('t:new', replicas[1]!, 50_000);
    expect(fresh.countOf(replicas[1]!.engineId, 30_000)).toBe(2);
    expect(fresh.countOf(replicas[1]!.engineId, 70_000)).toBe(1);
  });
});

describe('scale-down order and slots', () => {
  it('idle replicas first, then fewest pinned threads, then the highest slot', () => {
    const { sets, replicas } = setWith(4);
    const set = sets.set('rec', 'r1');
    replicas[0]!.inflight = 2;
    replicas[3]!.inflight = 1;
    set.pins.pin('t:x', replicas[2]!, 1000);
    const order = scaleDownOrder(set, 1000).map((r) => r.slot);
    expect(order).toEqual([1, 2, 3, 0]);
  });

  it('a new replica takes the lowest slot no replica of the record uses (any revision, draining)', () => {
    const { sets } = setWith(2);
    sets.set('rec', 'r2').launchingSlots.add(2);
    expect(sets.freeSlot('rec')).toBe(3);
    expect(sets.freeSlot('rec', [3, 4])).toBe(5);
    sets.remove(sets.set('rec', 'r1').replicas[0]!);
    expect(sets.freeSlot('rec')).toBe(0);
  });
});

describe('requests in flight, as the autoscaler reads them', () => {
  it('short requests between two looks count as their time-weighted average', () => {
    const r = replica(0);
    takeArea(r, 0);
    for (let t = 0; t < 1000; t += 10) {
      beginRequest(r, t);
      endRequest(r, t + 5); // 100 requests of 5 ms in one second: half a request on average
    }
    expect(takeArea(r, 1000) / 1000).toBeCloseTo(0.5);
    beginRequest(r, 1000);
    beginRequest(r, 1000); // two long ones, still open at the next look
    expect(takeArea(r, 3000) / 2000).toBeCloseTo(2);
    expect(r.inflight).toBe(2);
    endRequest(r, 3000);
    expect(r.lastUsedMs).toBe(3000);
  });
});
