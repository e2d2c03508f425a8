/**
 * STANDBY (spec "States and transitions"; ARCHITECTURE.md "Sandboxes on the local engine"): a
 * RUNNING sandbox that no request has reached for `standbyAfterMs`, with no request in flight and no
 * keep-alive process (sandboxd's /health `keepAlive`), is frozen with the cgroup freezer — memory,
 * processes and filesystem kept, CPU zero. The first request that reaches it thaws it before being
 * forwarded (`touch`, on the gateway's hot path: one cgroup write, no await).
 *
 * Idle detection is one scan per tick over the live sandboxes rather than a timer per sandbox:
 * `touch` then costs an assignment, not a timer reset, and a tick over hundreds of entries is
 * microseconds. The store sees `lastUsedAt` at most every `lastUsedWriteMs` per sandbox.
 *
 * The record of a resume (state RUNNING, a Resume event) is written as soon as the request that
 * woke the sandbox has been answered (`whenIdle`, run by live-sandboxes.ts `released` in an
 * immediate after the exchange): issue 20 item 2, a store write on the request path. Written from
 * `touch`, it held the event loop ~1–2 ms just as sandboxd's answer came back, on every resume.
 * On SQLite the write completes before the next I/O callback, so the caller's next request sees
 * it (on PostgreSQL it is one round trip behind); the event keeps the resume's time, so metering
 * charges from it. A
 * request that stays in flight (a stream, a terminal) holds the record back at most
 * RESUME_RECORD_MAX_DELAY_MS plus a tick; it is always written before the next freeze.
 *
 * A sandbox younger than `minAgeMs` (TARMAC_STANDBY_MIN_AGE, 10 s) is not frozen, whatever its
 * idle time: about 8 s after sandboxd starts, V8's memory reducer runs two full collections
 * (packages/sandboxd ARCHITECTURE.md "V8's memory reducer and STANDBY"). Frozen before then, a
 * sandbox runs them right after its next thaw, beside the request that woke it (issue 20: resume
 * p99). The cost is at most a few seconds more of an idle sandbox's first window.
 */
import { FreezeAbortedError } from '@tarmac/engine';
import type { Logger } from 'pino';
import { event, mutate, type Resources } from './record-writer.js';
import type { LiveSandbox, LiveSandboxes } from './live-sandboxes.js';
import type { SandboxSpecView, SandboxSystem } from '../records/sandbox-record.js';

/** The two engine operations standby needs (LocalEngine has both). */
export interface Freezer {
  freeze(engineId: string): Promise<void>;
  /** Synchronous on purpose: the resume path must not wait for the thread pool. */
  thawSync(engineId: string): void;
}

export interface StandbyOptions {
  live: LiveSandboxes;
  freezer: Freezer;
  resources: Resources;
  logger: Logger;
  standbyAfterMs: number;
  /** A sandbox is not frozen before this age (bootedMs); default STANDBY_MIN_AGE_MS. */
  minAgeMs?: number;
  /** Running keep-alive processes in the sandbox (sandboxd /health); throws when unreachable. */
  keepAliveCount: (ip: string, recordId: string) => Promise<number>;
  now?: () => number;
  tickMs?: number;
  lastUsedWriteMs?: number;
  /** Told after every use, so ttl-idle expiry timers can move. */
  onUse?: (entry: LiveSandbox) => void;
}

/** A resume whose requests stay in flight longer than this is recorded anyway (an open stream). */
export const RESUME_RECORD_MAX_DELAY_MS = 1000;

/** sandboxd's start-up collections are done by then (V8's memory reducer: ~8 s, then ~0.5 s). */
export const STANDBY_MIN_AGE_MS = 10_000;

export class StandbyController {
  private timer: NodeJS.Timeout | undefined;
  /** Resumes not yet in the store, by record id: when each happened. */
  private readonly resumed = new Map<string, Date>();
  private ticking = false;
  /** Sandboxes kept awake by keep-alive processes: when to ask sandboxd again. */
  private readonly recheckAt = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: StandbyOptions) {
    this.now = o.now ?? Date.now;
  }

  start(): void {
    const tick = this.o.tickMs ?? Math.min(1000, Math.max(100, this.o.standbyAfterMs / 4));
    this.timer = setInterval(() => void this.tick(), tick);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * A request is about to reach the sandbox: mark it used and, when it is in STANDBY (or being
   * frozen), thaw it now. Throws only if the freezer cannot be written (the sandbox is gone).
   */
  touch(entry: LiveSandbox): void {
    entry.lastUsedMs = this.now();
    if (entry.state === 'STANDBY' || entry.freezing) {
      this.o.freezer.thawSync(entry.engineId);
      const wasStandby = entry.state === 'STANDBY';
      entry.state = 'RUNNING';
      entry.freezing = false;
      if (wasStandby) {
        // Once the request is answered (see the top of this file).
        this.resumed.set(entry.id, new Date(this.now()));
        entry.whenIdle = () => void this.recordResume(entry, this.now(), true);
      }
    }
  }

  /** One pass: freeze idle sandboxes and flush lastUsedAt. Exposed for tests. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.now();
      const work: Promise<void>[] = [];
      for (const entry of this.o.live.all()) {
        const resume = this.recordResume(entry, now);
        if (
          entry.state === 'RUNNING' &&
          !entry.freezing &&
          entry.inflight === 0 &&
          now - entry.lastUsedMs >= this.o.standbyAfterMs &&
          now - entry.bootedMs >= (this.o.minAgeMs ?? STANDBY_MIN_AGE_MS) &&
          now >= (this.recheckAt.get(entry.id) ?? 0)
        ) {
          work.push(resume ? resume.then(() => this.maybeFreeze(entry)) : this.maybeFreeze(entry));
        } else if (resume) {
          work.push(resume);
        } else if (entry.lastUsedMs - entry.lastUsedWrittenMs >= (this.o.lastUsedWriteMs ?? 5000)) {
          work.push(this.flushLastUsed(entry));
        }
      }
      await Promise.all(work);
      for (const id of this.recheckAt.keys()) if (!this.o.live.getById(id)) this.recheckAt.delete(id);
      for (const id of this.resumed.keys()) if (!this.o.live.getById(id)) this.resumed.delete(id);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Writes the pending resume's record: now (`answered`, from `whenIdle`), or from a tick when its
   * requests are answered or it waited RESUME_RECORD_MAX_DELAY_MS. Once per resume.
   */
  private recordResume(entry: LiveSandbox, now: number, answered = false): Promise<void> | undefined {
    const at = this.resumed.get(entry.id);
    if (!at) return undefined;
    if (!answered && entry.inflight > 0 && now - at.getTime() < RESUME_RECORD_MAX_DELAY_MS) return undefined;
    this.resumed.delete(entry.id);
    entry.whenIdle = undefined;
    return this.record(entry, 'RUNNING', 'Resumed by a request', at);
  }

  private async maybeFreeze(entry: LiveSandbox): Promise<void> {
    const usedBefore = entry.lastUsedMs;
    let keepAlive: number;
    try {
      keepAlive = await this.o.keepAliveCount(entry.ip, entry.id);
    } catch {
      return; // sandboxd not answering: the lifecycle controller's health pass decides
    }
    if (keepAlive > 0) {
      // Look again half a standby period later, not on every tick. Not a use: lastUsedAt and
      // ttl-idle count requests only.
      this.recheckAt.set(entry.id, this.now() + this.o.standbyAfterMs / 2);
      return;
    }
    this.recheckAt.delete(entry.id);
    if (entry.lastUsedMs !== usedBefore || entry.inflight > 0 || entry.state !== 'RUNNING') return;
    entry.freezing = true;
    try {
      await this.o.freezer.freeze(entry.engineId);
    } catch (err) {
      entry.freezing = false;
      if (!(err instanceof FreezeAbortedError)) {
        this.o.logger.warn({ err, sandbox: entry.name }, 'could not freeze an idle sandbox');
      }
      return;
    }
    if (!entry.freezing) return; // a request thawed it while the freeze settled
    entry.freezing = false;
    entry.state = 'STANDBY';
    await this.record(entry, 'STANDBY', `No activity for ${Math.round(this.o.standbyAfterMs / 1000)}s`);
  }

  /** Writes the state change as the record's state and an event (spec "State changes are events"). */
  private async record(
    entry: LiveSandbox,
    state: 'RUNNING' | 'STANDBY',
    message: string,
    at = new Date(this.now()),
  ): Promise<void> {
    const lastUsedAt = new Date(entry.lastUsedMs).toISOString();
    const written = entry.lastUsedMs;
    await mutate<SandboxSpecView>(this.o.resources, entry.id, (row) => {
      if (row.status !== 'DEPLOYED') return undefined;
      const system: SandboxSystem = { ...row.system, lastUsedAt };
      return {
        state: entry.state === state ? state : row.state,
        system,
        events: [...row.events, event(state === 'STANDBY' ? 'Standby' : 'Resume', 'DEPLOYED', message, at)],
        updatedAt: at.toISOString(),
      };
    }).catch((err: unknown) =>
      this.o.logger.warn({ err, sandbox: entry.name }, 'could not record a state change'),
    );
    entry.lastUsedWrittenMs = Math.max(entry.lastUsedWrittenMs, written);
  }

  private async flushLastUsed(entry: LiveSandbox): Promise<void> {
    const written = entry.lastUsedMs;
    const lastUsedAt = new Date(written).toISOString();
    entry.lastUsedWrittenMs = written; // optimistic: a failed write is retried by a later use
    this.o.onUse?.(entry);
    await mutate<SandboxSpecView>(this.o.resources, entry.id, (row) =>
      row.status === 'DEPLOYED' ? { system: { ...row.system, lastUsedAt } } : undefined,
    ).catch((err: unknown) => this.o.logger.warn({ err, sandbox: entry.name }, 'could not write lastUsedAt'));
  }
}
