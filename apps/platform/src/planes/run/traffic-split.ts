/**
 * Which revision's replica set a request goes to, and which sets keep running (issue 16
 * "revision.active, canary + canaryPercent split traffic by weight; stickySessionTtl keeps a
 * client on its revision"; ARCHITECTURE.md "Revisions and traffic"). The catalogue resolves
 * `spec.revision` into targets (revision, share, what it runs); this file acts on them:
 *
 * - **Weighted pick** per request: a uniform draw over the shares (Knative's Route splits the same
 *   way, per request). A request with a thread id (`X-Service-Thread-Id`, `X-Blaxel-Thread-Id`) is
 *   placed by a hash of it instead, so every request of a thread lands on the same revision (its
 *   history lives in that revision's process) and threads still split by the shares.
 * - **Sticky sessions** (`stickySessionTtl` > 0): the answer carries a cookie naming the revision
 *   that served it, `tarmac-revision=<revision>.<expiry, unix seconds>`, scoped to the record's
 *   run path, `Max-Age` the TTL; while it is unexpired and its revision still has a share, the
 *   client's requests go there. The expiry is in the value too, so clients that replay cookies
 *   without honouring Max-Age stop sticking on time. Not signed: it can only choose among
 *   revisions the owner gives a share to. (The reference says nothing of how the public platform
 *   implements it; a cookie is what browsers and cookie-keeping HTTP clients follow unaided.)
 * - **MCP sessions**: `Mcp-Session-Id` is made by the replica answering `initialize`; the gateway
 *   remembers which revision made it (`SessionRevisions`) and sends the session's requests there
 *   while that revision has a share (MCP clients keep no cookies).
 * - **Fallback**: when the chosen revision has no ready replica (starting, crash-looping) another
 *   target's ready replica serves, then any older set still running (a rollout in progress): a
 *   request waits only when nothing can answer.
 * - **Keep vs retire**: every target's set runs; a set outside the targets is retired only once
 *   every target has a ready replica — without `spec.revision` the newest revision is the only
 *   target, which is the rolling replacement: the previous set serves until the new one answers.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isUp, type Affinity, type Replica, type ReplicaSet, type ReplicaSets } from './replica-sets.js';
import type { RunRecord, TrafficTarget } from './run-ports.js';

export const STICKY_COOKIE = 'tarmac-revision';

/** The revisions taking traffic; a record without a resolved split: its newest revision, all of it. */
export function targetsOf(record: RunRecord): TrafficTarget[] {
  const given = record.traffic?.filter((t) => t.percent > 0);
  if (given && given.length > 0) return given;
  return [{ revision: record.revision, percent: 100, image: record.image, memoryMB: record.memoryMB }];
}

/** The record as one revision's replica is launched from: that revision's id, image and memory. */
export function revisionRecord(record: RunRecord, t: TrafficTarget): RunRecord {
  return { ...record, revision: t.revision, image: t.image, memoryMB: t.memoryMB };
}

/** Whether the record still gives this revision a share (a start of it is still wanted). */
export function isTarget(record: RunRecord, revision: string): boolean {
  return targetsOf(record).some((t) => t.revision === revision);
}

export interface RevisionChoice {
  revision: string;
  /** The client already holds an unexpired cookie for it (no new cookie is set). */
  sticky: boolean;
}

/** Picks the revision of one request (weighted; by thread hash; the sticky cookie first). */
export function chooseRevision(
  record: RunRecord,
  headers: IncomingHttpHeaders,
  nowMs: number,
  random: () => number = Math.random,
): RevisionChoice {
  const targets = targetsOf(record);
  if ((record.stickySessionTtl ?? 0) > 0) {
    const held = stickyRevision(headers.cookie, nowMs);
    if (held && targets.some((t) => t.revision === held)) return { revision: held, sticky: true };
  }
  if (targets.length === 1) return { revision: targets[0]!.revision, sticky: false };
  const thread = first(headers['x-service-thread-id']) ?? first(headers['x-blaxel-thread-id']);
  return { revision: pick(targets, thread ? hashUnit(thread) : random()), sticky: false };
}

/** The target whose cumulative share covers `unit` (0 ≤ unit < 1). */
export function pick(targets: readonly TrafficTarget[], unit: number): string {
  const total = targets.reduce((n, t) => n + t.percent, 0);
  let at = unit * total;
  for (const t of targets) {
    if (at < t.percent) return t.revision;
    at -= t.percent;
  }
  return targets.at(-1)!.revision;
}

/** A stable number in [0, 1) for a thread id. */
function hashUnit(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;
}

export const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) || undefined;

/** The revision an unexpired sticky cookie names. */
export function stickyRevision(cookie: string | string[] | undefined, nowMs: number): string | undefined {
  const text = Array.isArray(cookie) ? cookie.join('; ') : (cookie ?? '');
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== STICKY_COOKIE) continue;
    const m = /^([A-Za-z0-9_-]{1,64})\.(\d{1,12})$/.exec(part.slice(eq + 1).trim());
    if (m && Number(m[2]) * 1000 > nowMs) return m[1];
  }
  return undefined;
}

/** The Set-Cookie keeping a client on `revision` for `ttlSeconds`, scoped to the record's run path. */
export function stickyCookie(path: string, revision: string, ttlSeconds: number, nowMs: number): string {
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  return `${STICKY_COOKIE}=${revision}.${expires}; Max-Age=${ttlSeconds}; Path=${path}; HttpOnly; SameSite=Lax`;
}

/**
 * A ready replica for a request that chose `revision`: of that revision, else of another target
 * (largest share first), else of any set still running (the one a rollout replaces). The revision
 * is chosen first; `ReplicaSets.ready` then picks the replica within its set (by `affinity`, the
 * thread's or MCP session's pinned replica: replica-affinity.ts; else the least busy).
 */
export function servingReplica(
  sets: ReplicaSets,
  record: RunRecord,
  revision: string,
  affinity?: Affinity,
): Replica | undefined {
  const chosen = sets.ready(record.id, revision, affinity);
  if (chosen) return chosen;
  const others = targetsOf(record)
    .filter((t) => t.revision !== revision)
    .sort((a, b) => b.percent - a.percent);
  for (const t of others) {
    const r = sets.ready(record.id, t.revision, affinity);
    if (r) return r;
  }
  return sets.serving(record.id, revision, affinity);
}

/** Sets to retire: those outside the targets, once every target has a replica up (ready or STANDBY). */
export function retirable(sets: readonly ReplicaSet[], targets: readonly TrafficTarget[]): ReplicaSet[] {
  const wanted = new Set(targets.map((t) => t.revision));
  const allReady = targets.every((t) => sets.some((s) => s.revision === t.revision && s.replicas.some(isUp)));
  return allReady ? sets.filter((s) => !wanted.has(s.revision)) : [];
}

/**
 * Which revision made each MCP session, per record: bounded (the oldest entry goes first), in
 * memory (after a platform restart a session's next request is placed like any other).
 */
export class SessionRevisions {
  private readonly made = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  revisionOf(recordId: string, session: string): string | undefined {
    return this.made.get(`${recordId}\u0000${session}`);
  }

  remember(recordId: string, session: string, revision: string): void {
    const key = `${recordId}\u0000${session}`;
    if (this.made.has(key)) return;
    if (this.made.size >= this.max) this.made.delete(this.made.keys().next().value!);
    this.made.set(key, revision);
  }

  get size(): number {
    return this.made.size;
  }
}
