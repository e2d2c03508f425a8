// The revision choice of the run gateway and the keep/retire rule of the controller
// (traffic-split.ts): weighted picks, thread hashing, sticky cookies (and their expiry), the
// fallback while a revision starts, retirement only once every revision with traffic answers.
import { describe, expect, it } from 'vitest';
import { ReplicaSets, type Replica } from './replica-sets.js';
import type { RunRecord } from './run-ports.js';
import {
  chooseRevision,
  pick,
  retirable,
  servingReplica,
  stickyCookie,
  stickyRevision,
  targetsOf,
} from './traffic-split.js';

const NOW = 1_800_000_000_000;

function record(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    status: 'DEPLOYED',
    enabled: true,
    public: false,
    image: 'agents/a:2',
    memoryMB: 256,
    port: 8080,
    hosts: [],
    minScale: 0,
    maxScale: 10,
    revision: 'new',
    lastMessage: undefined,
    ...over,
  };
}

const canary = (over: Partial<RunRecord> = {}) =>
  record({
    traffic: [
      { revision: 'old', percent: 80, image: 'agents/a:1', memoryMB: 256 },
      { revision: 'new', percent: 20, image: 'agents/a:2', memoryMB: 512 },
    ],
    ...over,
  });

function replica(revision: string, phase: Replica['phase'] = 'ready'): Replica {
  return {
    engineId: `rp-${revision}`,
    recordId: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    revision,
    slot: 0,
    attempt: 1,
    ip: '10.0.0.2',
    port: 8080,
    phase,
    credentialId: `rec.rp0.${revision}`,
    readyAtMs: 0,
    inflight: 0,
    lastUsedMs: 0,
  };
}

/** A deterministic uniform source (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('traffic split', () => {
  it('a record without a split sends everything to its newest revision', () => {
    expect(targetsOf(record())).toEqual([
      { revision: 'new', percent: 100, image: 'agents/a:2', memoryMB: 256 },
    ]);
    expect(chooseRevision(record(), {}, NOW)).toEqual({ revision: 'new', sticky: false });
  });

  it('picks by the shares: 80/20 over 10,000 draws within 2 points; the edges of the range', () => {
    const r = canary();
    const random = seeded(7);
    let old = 0;
    for (let i = 0; i < 10_000; i++) if (chooseRevision(r, {}, NOW, random).revision === 'old') old++;
    expect(Math.abs(old / 100 - 80)).toBeLessThan(2);
    const targets = targetsOf(r);
    expect(pick(targets, 0)).toBe('old');
    expect(pick(targets, 0.7999)).toBe('old');
    expect(pick(targets, 0.8)).toBe('new');
    expect(pick(targets, 0.99999)).toBe('new');
  });

  it('a thread id always lands on the same revision, and threads still split by the shares', () => {
    const r = canary();
    const of = (thread: string) => chooseRevision(r, { 'x-service-thread-id': thread }, NOW).revision;
    expect(new Set([1, 2, 3, 4, 5].map(() => of('thread-42'))).size).toBe(1);
    let old = 0;
    for (let i = 0; i < 2000; i++) if (of(`t-${i}`) === 'old') old++;
    expect(Math.abs(old / 20 - 80)).toBeLessThan(4);
    // X-Blaxel-Thread-Id is a thread id too.
    expect(chooseRevision(r, { 'x-blaxel-thread-id': 'thread-42' }, NOW).revision).toBe(of('thread-42'));
  });

  it('a sticky cookie keeps the client on its revision until it expires, only while it has traffic', () => {
    const r = canary({ stickySessionTtl: 60 });
    const cookie = stickyCookie('/ws/agents/a', 'new', 60, NOW);
    expect(cookie).toBe(
      `tarmac-revision=new.${NOW / 1000 + 60}; Max-Age=60; Path=/ws/agents/a; HttpOnly; SameSite=Lax`,
    );
    const value = cookie.split(';')[0]!;
    const headers = { cookie: `other=1; ${value}` };
    const always = () => 0; // the draw alone would say "old"
    for (let i = 0; i < 20; i++) {
      expect(chooseRevision(r, headers, NOW + 59_000, always)).toEqual({ revision: 'new', sticky: true });
    }
    // Expired (whatever the client's cookie jar does with Max-Age): a fresh pick.
    expect(chooseRevision(r, headers, NOW + 60_000, always)).toEqual({ revision: 'old', sticky: false });
    // Without stickySessionTtl the cookie means nothing.
    expect(chooseRevision(canary(), headers, NOW, always).revision).toBe('old');
    // A revision that lost its traffic is not honoured, forged or not.
    const forged = { cookie: `tarmac-revision=retired.${NOW / 1000 + 60}` };
    expect(chooseRevision(r, forged, NOW, always)).toEqual({ revision: 'old', sticky: false });
    expect(stickyRevision('tarmac-revision=../x.1', NOW)).toBeUndefined();
    expect(stickyRevision(['a=b', `tarmac-revision=old.${NOW / 1000 + 1}`], NOW)).toBe('old');
  });

  it('serves the chosen revision; while it has no ready replica another target, then an older set', () => {
    const sets = new ReplicaSets();
    const r = canary();
    expect(servingReplica(sets, r, 'new')).toBeUndefined();
    sets.set('rec', 'older').replicas.push(replica('older'));
    expect(servingReplica(sets, r, 'new')?.revision).toBe('older'); // a rollout in progress
    sets.set('rec', 'old').replicas.push(replica('old'));
    expect(servingReplica(sets, r, 'new')?.revision).toBe('old'); // the other target first
    sets.set('rec', 'new').replicas.push(replica('new', 'starting'));
    expect(servingReplica(sets, r, 'new')?.revision).toBe('old');
    sets.set('rec', 'new').replicas[0]!.phase = 'ready';
    expect(servingReplica(sets, r, 'new')?.revision).toBe('new');
    expect(servingReplica(sets, r, 'old')?.revision).toBe('old');
  });

  it('retires sets without traffic only once every target answers; keeps both targets', () => {
    const sets = new ReplicaSets();
    const targets = targetsOf(canary());
    sets.set('rec', 'older').replicas.push(replica('older'));
    sets.set('rec', 'old').replicas.push(replica('old'));
    sets.set('rec', 'new').replicas.push(replica('new', 'starting'));
    expect(retirable(sets.setsOf('rec'), targets)).toEqual([]);
    sets.set('rec', 'new').replicas[0]!.phase = 'ready';
    expect(retirable(sets.setsOf('rec'), targets).map((s) => s.revision)).toEqual(['older']);
    // No split: the newest alone; the previous set goes once it answers (the rolling replacement).
    const single = targetsOf(record());
    expect(retirable(sets.setsOf('rec'), single).map((s) => s.revision)).toEqual(['older', 'old']);
  });

  it('the revision first, then the replica within its set by the thread pin (never across revisions)', () => {
    const sets = new ReplicaSets();
    const r = canary();
    const n1 = { ...replica('new'), engineId: 'rp-new-1', slot: 1 };
    const n2 = { ...replica('new'), engineId: 'rp-new-2', slot: 2 };
    sets.set('rec', 'new').replicas.push(n1, n2);
    sets.set('rec', 'old').replicas.push(replica('old'));
    sets.pin(n2, 't:thread-1', NOW);
    const affinity = { key: 't:thread-1', now: NOW };
    expect(servingReplica(sets, r, 'new', affinity)).toBe(n2);
    n1.inflight = 0;
    n2.inflight = 5; // busier, still the thread's replica
    expect(servingReplica(sets, r, 'new', affinity)).toBe(n2);
    // The same thread sent to the other revision gets that set's replica, not the pin of `new`.
    expect(servingReplica(sets, r, 'old', affinity)?.revision).toBe('old');
    // Without a key: the least busy replica of the chosen revision.
    expect(servingReplica(sets, r, 'new')).toBe(n1);
  });

  it('a target whose replica is in STANDBY counts as answering; one stopped for idleness does not', () => {
    const sets = new ReplicaSets();
    const targets = targetsOf(canary());
    sets.set('rec', 'older').replicas.push(replica('older'));
    sets.set('rec', 'old').replicas.push(replica('old', 'standby'));
    sets.set('rec', 'new').asleep = true; // scaled to zero: no replica until a request wakes it
    expect(retirable(sets.setsOf('rec'), targets)).toEqual([]);
    sets.set('rec', 'new').replicas.push(replica('new', 'standby'));
    expect(retirable(sets.setsOf('rec'), targets).map((s) => s.revision)).toEqual(['older']);
    // A request for `new` gets its STANDBY replica (the idle policy's claim resumes it).
    expect(servingReplica(sets, canary(), 'new')?.revision).toBe('new');
  });
});
