/**
 * The run controller (issue 16; ARCHITECTURE.md beside this file): keeps one replica per enabled
 * agent or function whose record names an image, level-triggered like the sandbox controller and
 * the job runner. Each pass reads the records (catalogue) and the replica sets (memory, rebuilt
 * from the engine's containers at start) and converges:
 *   - enabled, image, no replica of a revision taking traffic (the newest, or spec.revision's
 *     active and canary: traffic-split.ts) → start one (after the crash backoff); once each
 *     answers on PORT → DEPLOYED, and replicas of revisions without traffic are removed;
 *   - a replica whose container stopped → output archived, container removed, started again
 *     after 1 s, 2 s, 4 s … (30 s cap); never answered → FAILED with its last log lines;
 *   - `enabled: false` → replicas removed, DEACTIVATED; a deleted record → replicas removed.
 * Passes run on every change notice of the two kinds (coalesced) and every `tickMs`.
 */
import type { Logger } from 'pino';
import type { LogArchive } from '../../framework/log-archive.js';
import { IdlePolicy, type IdleSettings } from './idle-policy.js';
import { adoptReplicas } from './replica-adoption.js';
import { ReplicaLauncher, type LaunchOutcome } from './replica-launcher.js';
import { ReplicaRetirement } from './replica-retirement.js';
import {
  backoffMs,
  isUp,
  ReplicaSets,
  STABLE_AFTER_MS,
  type Replica,
  type ReplicaSet,
} from './replica-sets.js';
import type {
  Forwarder,
  ReplicaEngine,
  ReplicaSetup,
  RunCatalogue,
  RunKind,
  RunRecord,
  TrafficTarget,
} from './run-ports.js';
import { isTarget, retirable, revisionRecord, servingReplica, targetsOf } from './traffic-split.js';
import type { ReplicaUsage, UsagePhase } from './usage/replica-usage.js';

export interface RunControllerDeps {
  catalogue: RunCatalogue;
  engine: ReplicaEngine;
  setup: ReplicaSetup;
  logs: LogArchive;
  logger: Logger;
  /** Longest a new replica may take to listen on PORT (TARMAC_RUN_READY_TIMEOUT_SECONDS). */
  readyTimeoutMs: number;
  /** CPU cores a starting replica may use until it answers (TARMAC_RUN_STARTUP_CPU_CORES). */
  startupCpuCores?: number;
  /** Told after every pass that touched a record, and when a replica becomes ready. */
  onRecord?: (kind: RunKind, workspace: string, name: string) => void;
  /** Longest a retired replica's requests in flight may take to finish before it is stopped. */
  drainMs?: number;
  /** STANDBY and stop windows (idle-policy.ts); both 0 (never) when not given. */
  idle?: IdleSettings;
  /** Closes the gateway's idle connections to a replica about to freeze. */
  dropIdle?: Forwarder['dropIdle'];
  tickMs?: number;
  now?: () => number;
  /** Replica usage for the meter (usage/replica-usage.ts), told by the launcher. */
  usage?: ReplicaUsage;
  /** Told the records of every pass (the trigger paths' table, triggers/trigger-routes.ts). */
  onRecords?: (records: readonly RunRecord[]) => void;
}

/** Statuses during which the build plane owns the record: a serving replica stays, none starts. */
const BUILD_STATUSES = new Set(['UPLOADING', 'BUILDING']);

export const recordKey = (kind: RunKind, workspace: string, name: string) =>
  `${kind}\u0000${workspace}\u0000${name}`;

export class RunController {
  readonly sets = new ReplicaSets();
  readonly launcher: ReplicaLauncher;
  readonly idle: IdlePolicy;
  private readonly now: () => number;
  /** The first pass after start (a DEPLOYED scale-to-zero record with no container sleeps). */
  private firstPass = true;
  private records = new Map<string, RunRecord>();
  private readonly retirement: ReplicaRetirement;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private resolveReady!: () => void;
  /** Settles once the first pass after start re-attached what survived a restart. */
  readonly ready = new Promise<void>((r) => (this.resolveReady = r));

  constructor(private readonly d: RunControllerDeps) {
    this.now = d.now ?? Date.now;
    this.launcher = new ReplicaLauncher({ ...d, now: this.now });
    this.retirement = new ReplicaRetirement({
      ...d,
      sets: this.sets,
      launcher: this.launcher,
      kick: () => this.kick(),
    });
    this.idle = new IdlePolicy({
      ...(d.idle ?? { standbyAfterMs: 0, stopAfterMs: 0 }),
      sets: this.sets,
      engine: d.engine,
      catalogue: d.catalogue,
      ...(d.dropIdle ? { dropIdle: d.dropIdle } : {}),
      recordOf: (r) => this.records.get(recordKey(r.kind, r.workspace, r.name)),
      remove: (r) => this.retirement.remove(r.recordId, r),
      kick: () => this.kick(),
      meterPhase: (r, phase) => this.meterPhase(r, phase),
      logger: d.logger,
      now: this.now,
    });
  }

  async start(): Promise<void> {
    try {
      await this.adopt();
      await this.pass();
    } catch (err) {
      this.d.logger.error({ err }, 'run controller start pass failed; the next pass retries');
    } finally {
      this.resolveReady();
    }
    this.timer = setInterval(() => this.kick(), this.d.tickMs ?? 1000);
    this.timer.unref();
  }

  /** Stops the loop; replicas keep running (a restarted platform re-attaches them). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.passing;
  }

  /** The record as of the last pass (the gateway's hot path: no store read per request). */
  record(kind: RunKind, workspace: string, name: string): RunRecord | undefined {
    return this.records.get(recordKey(kind, workspace, name));
  }

  /** Every record as of the last pass (a new map per pass: app-hosts.ts caches by identity). */
  snapshot(): ReadonlyMap<string, RunRecord> {
    return this.records;
  }

  /**
   * The replica a request goes to: one of `revision` (the gateway's weighted pick), else of another
   * revision taking traffic, else of the set a rollout replaces (traffic-split.ts servingReplica);
   * resumed at once when it is in STANDBY. The chosen revision's set wakes when it sleeps after
   * scale to zero (idle-policy.ts claim) — even when another revision's replica serves meanwhile,
   * so the split comes back; with no replica at all the gateway holds the request until one answers.
   */
  readyReplica(record: RunRecord, revision = targetsOf(record)[0]!.revision): Replica | undefined {
    const serving = servingReplica(this.sets, record, revision);
    return this.idle.claim(record, serving, this.sets.get(record.id, revision));
  }

  /**
   * The STANDBY seam of metering (ARCHITECTURE.md "Metering"): call when a replica is frozen
   * (`standby`) or thawed (`running`), so its time is billed where a sandbox's STANDBY goes.
   */
  meterPhase(replica: Pick<Replica, 'engineId'>, phase: UsagePhase): void {
    this.d.usage?.phase(replica.engineId, phase, this.now());
  }

  /** Egress identities of every replica (compose.ts adds them to the proxy's live list). */
  liveReplicas(): Array<{ id: string; workspace: string; name: string; ip: string }> {
    return this.sets
      .all()
      .map((r) => ({ id: r.credentialId, workspace: r.workspace, name: r.name, ip: r.ip }));
  }

  /** The egress identity of a replica being created (its first request can beat the answer). */
  async findLive(credentialId: string) {
    const known = this.liveReplicas().find((r) => r.id === credentialId);
    if (known) return known;
    const creating = this.launcher.creating.get(credentialId);
    const info = creating && (await this.launcher.inspect(creating.engineId));
    if (!creating || !info || info.status === 'STOPPED') return undefined;
    return {
      id: credentialId,
      workspace: creating.record.workspace,
      name: creating.record.name,
      ip: info.ip,
    };
  }

  kick(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((err) => this.d.logger.error({ err }, 'run controller pass failed; the next one retries'))
      .finally(() => {
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** After a restart: every running replica container becomes a replica again (no new container). */
  private adopt(): Promise<void> {
    return adoptReplicas({
      ...this.d,
      sets: this.sets,
      launcher: this.launcher,
      idle: this.idle,
      now: this.now,
    });
  }

  private async pass(): Promise<void> {
    const list = await this.d.catalogue.list();
    const next = new Map<string, RunRecord>();
    for (const r of list) next.set(recordKey(r.kind, r.workspace, r.name), r);
    const before = this.records;
    this.records = next;
    this.d.onRecords?.(list);
    const live = new Set(list.map((r) => r.id));
    for (const r of list) {
      await this.reconcile(r);
      this.d.onRecord?.(r.kind, r.workspace, r.name);
    }
    // Deleted records: their replicas go (and held requests learn it: 404).
    for (const id of this.sets.recordIds()) {
      if (live.has(id)) continue;
      for (const set of this.sets.setsOf(id)) this.retirement.retire(id, set);
    }
    for (const [key, r] of before) if (!next.has(key)) this.d.onRecord?.(r.kind, r.workspace, r.name);
    this.firstPass = false;
    this.idle.tick();
  }

  private async reconcile(record: RunRecord): Promise<void> {
    const now = this.now();
    for (const set of this.sets.setsOf(record.id)) await this.observe(record, set, now);
    const sets = this.sets.setsOf(record.id);
    if (!record.enabled) {
      for (const set of sets) this.retirement.retire(record.id, set);
      const draining = this.retirement.draining(record.id);
      if (this.sets.setsOf(record.id).length === 0 && !draining && record.status !== 'DEACTIVATED') {
        await this.d.catalogue.setStatus(
          record,
          'DEACTIVATED',
          `${label(record)} is disabled; no replica runs`,
        );
      }
      return;
    }
    if (BUILD_STATUSES.has(record.status)) return;
    // Each revision taking traffic runs (traffic-split.ts); one without an image yet waits for it.
    const targets = targetsOf(record).filter((t) => t.image);
    if (targets.length === 0) return;
    const answering: Replica[] = [];
    for (const t of targets) {
      const ready = this.converge(record, t, now);
      if (ready) answering.push(ready);
    }
    if (answering.length < targets.length) return;
    // Every revision with traffic answers: sets without traffic go (the rollout's end).
    for (const set of retirable(this.sets.setsOf(record.id), targets)) this.retirement.retire(record.id, set);
    if (record.status !== 'DEPLOYED') {
      await this.d.catalogue.setStatus(record, 'DEPLOYED', deployedMessage(targets, answering));
    }
  }

  /**
   * One revision's set: its replica that is up (ready, or in STANDBY: the idle policy's claim thaws
   * it), or a start of one (after the crash backoff) unless the set sleeps after scale to zero.
   */
  private converge(record: RunRecord, t: TrafficTarget, now: number): Replica | undefined {
    const fresh = !this.sets.get(record.id, t.revision);
    const current = this.sets.set(record.id, t.revision);
    // After a restart, a DEPLOYED scale-to-zero record without a container for this revision was
    // stopped for idleness (or the host rebooted): it stays at zero until a request wakes it.
    if (this.firstPass && fresh && record.status === 'DEPLOYED' && this.sleepsAtZero(record))
      current.asleep = true;
    const ready = current.replicas.find(isUp);
    if (ready) {
      if (ready.readyAtMs !== undefined && now - ready.readyAtMs > STABLE_AFTER_MS) current.crashes = 0;
      return ready;
    }
    if (
      current.replicas.length > 0 ||
      current.launching ||
      current.blocked ||
      current.asleep ||
      now < current.notBeforeMs
    )
      return undefined;
    current.launching = true;
    if (current.wokenAtMs !== undefined)
      this.d.logger.debug({ record: record.name, afterMs: now - current.wokenAtMs }, 'woken set launches');
    const attempt = current.nextAttempt++;
    const launched = revisionRecord(record, t);
    void this.launcher
      .launch(launched, 0, attempt, () => this.wanted(launched))
      .then((out) => this.launched(record, current, out))
      .catch((err) => this.d.logger.error({ err, record: record.name }, 'replica launch failed'))
      .finally(() => {
        current.launching = false;
        this.kick();
      });
    return undefined;
  }

  /** A container of this set that stopped: archived, removed, the set backs off. */
  private async observe(record: RunRecord, set: ReplicaSet, now: number): Promise<void> {
    for (const r of [...set.replicas]) {
      const info = await this.launcher.inspect(r.engineId);
      if (info && info.status !== 'STOPPED') continue;
      this.sets.remove(r);
      set.crashes++;
      set.notBeforeMs = now + backoffMs(set.crashes);
      const lastLines = await this.launcher.lastLines(r.engineId);
      await this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt).catch(() => undefined);
      if (!isTarget(record, set.revision) || !record.enabled) continue;
      const code = info?.exitCode ?? null;
      this.d.logger.warn({ record: record.name, replica: r.engineId, code }, 'replica exited');
      await this.d.catalogue.setStatus(
        record,
        'DEPLOYING',
        `Replica exited (code ${code ?? 'unknown'}); restarting in ${Math.round(backoffMs(set.crashes) / 1000)} s${tail(lastLines)}`,
      );
    }
  }

  /** Whether the record still gives this revision traffic (not deleted, disabled, moved on). */
  private wanted(launched: RunRecord): boolean {
    const now = this.records.get(recordKey(launched.kind, launched.workspace, launched.name));
    return now?.id === launched.id && now.enabled && isTarget(now, launched.revision);
  }

  private async launched(record: RunRecord, set: ReplicaSet, out: LaunchOutcome): Promise<void> {
    if (out.kind === 'cancelled') {
      const r = out.replica;
      await this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
      return;
    }
    if (out.kind === 'ready') {
      set.replicas.push(out.replica);
      this.idle.woke(record, set, out.replica);
      this.d.onRecord?.(record.kind, record.workspace, record.name);
      return;
    }
    if (out.kind === 'error') {
      if (out.blocked) set.blocked = out.message;
      if (!out.transient) set.crashes++;
      set.notBeforeMs = this.now() + (out.transient ? 1000 : backoffMs(set.crashes));
      if (!out.transient)
        await this.d.catalogue.setStatus(record, 'FAILED', `Could not start a replica: ${out.message}`);
      return;
    }
    set.crashes++;
    set.notBeforeMs = this.now() + backoffMs(set.crashes);
    const r = out.replica;
    await this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
    const of = targetsOf(record).length > 1 ? ` of revision ${set.revision}` : '';
    const why =
      out.kind === 'exited'
        ? `exited (code ${out.exitCode ?? 'unknown'}) before listening on port ${r.port}`
        : `did not listen on port ${r.port} within ${Math.round(this.d.readyTimeoutMs / 1000)} s`;
    await this.d.catalogue.setStatus(
      record,
      'FAILED',
      `Replica${of} ${why}; retrying in ${Math.round(backoffMs(set.crashes) / 1000)} s${tail(out.lastLines)}`,
    );
  }

  /** Whether a record's replicas are stopped after the idle window (minScale 0, stop enabled). */
  private sleepsAtZero(record: RunRecord): boolean {
    return record.minScale === 0 && (this.d.idle?.stopAfterMs ?? 0) > 0;
  }
}

/** The DEPLOYED event: the replica answering (and, with a split, each revision's share). */
function deployedMessage(targets: readonly TrafficTarget[], answering: readonly Replica[]): string {
  const one = (r: Replica, t: TrafficTarget) =>
    `Replica ${r.engineId} answers on port ${r.port} (revision ${t.revision}${targets.length > 1 ? `, ${t.percent}% of the traffic` : ''})`;
  return targets.map((t, i) => one(answering[i]!, t)).join('; ');
}

const LABELS = { agent: 'Agent', function: 'Function', application: 'Application' } as const;
const label = (r: RunRecord) => LABELS[r.kind];
const tail = (lines: string) => (lines ? `; last log lines:\n${lines}` : '; it printed nothing');
