/**
 * The run controller (issue 16; ARCHITECTURE.md beside this file): keeps the replicas of every
 * enabled agent or function whose record names an image, level-triggered like the sandbox
 * controller and the job runner. Each pass reads the records (catalogue) and the replica sets
 * (memory, rebuilt from the engine's containers at start) and converges:
 *   - enabled, image → the newest revision's set is sized to the autoscaler's count (autoscaler.ts,
 *     `scale`): replicas start (after the crash backoff) or drain and go; once one answers on
 *     PORT → DEPLOYED, and replicas of older revisions are removed;
 *   - a replica whose container stopped → output archived, container removed, started again
 *     after 1 s, 2 s, 4 s … (30 s cap); never answered → FAILED with its last log lines;
 *   - `enabled: false` → replicas removed, DEACTIVATED; a deleted record → replicas removed.
 * Passes run on every change notice of the two kinds (coalesced) and every `tickMs`.
 */
import type { Logger } from 'pino';
import type { LogArchive } from '../../framework/log-archive.js';
import { Autoscaler, DEFAULT_AUTOSCALE, type AutoscaleSettings } from './autoscaler.js';
import { adoptReplicas } from './replica-adoption.js';
import { ReplicaLauncher, type LaunchOutcome } from './replica-launcher.js';
import { backoffMs, ReplicaSets, STABLE_AFTER_MS, type Replica, type ReplicaSet } from './replica-sets.js';
import { SetScaler } from './replica-scaling.js';
import type { ReplicaEngine, ReplicaSetup, RunCatalogue, RunKind, RunRecord } from './run-ports.js';
import type { ReplicaUsage, UsagePhase } from './usage/replica-usage.js';

export interface RunControllerDeps {
  catalogue: RunCatalogue;
  engine: ReplicaEngine;
  setup: ReplicaSetup;
  logs: LogArchive;
  logger: Logger;
  /** Longest a new replica may take to listen on PORT (TARMAC_RUN_READY_TIMEOUT_SECONDS). */
  readyTimeoutMs: number;
  /** Told after every pass that touched a record, and when a replica becomes ready. */
  onRecord?: (kind: RunKind, workspace: string, name: string) => void;
  /** Longest a retired replica's requests in flight may take to finish before it is stopped. */
  drainMs?: number;
  /** Target concurrency, windows, ceilings (TARMAC_RUN_TARGET_CONCURRENCY …; autoscaler.ts). */
  autoscale?: AutoscaleSettings;
  tickMs?: number;
  now?: () => number;
  /** Replica usage for the meter (usage/replica-usage.ts), told by the launcher. */
  usage?: ReplicaUsage;
  /** Told the records of every pass (the trigger paths' table, triggers/trigger-routes.ts). */
  onRecords?: (records: readonly RunRecord[]) => void;
}

/** Requests in flight on a replica being removed get this long to finish (then SIGTERM, 5 s). */
export const DEFAULT_DRAIN_MS = 30_000;

/** Statuses during which the build plane owns the record: a serving replica stays, none starts. */
const BUILD_STATUSES = new Set(['UPLOADING', 'BUILDING']);

export const recordKey = (kind: RunKind, workspace: string, name: string) =>
  `${kind}\u0000${workspace}\u0000${name}`;

export class RunController {
  readonly sets = new ReplicaSets();
  readonly launcher: ReplicaLauncher;
  readonly autoscaler: Autoscaler;
  readonly scaler: SetScaler;
  private readonly now: () => number;
  private records = new Map<string, RunRecord>();
  /** Replicas draining and being removed, by engine id (out of their set, still live). */
  private readonly removing = new Map<string, Replica>();
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
    this.autoscaler = new Autoscaler(d.autoscale ?? DEFAULT_AUTOSCALE);
    this.scaler = new SetScaler({
      autoscaler: this.autoscaler,
      logger: d.logger,
      launch: (record, set) => this.launch(record, set),
      drainAndRemove: (r) => this.drainAndRemove(r),
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
   * The replica a request goes to (ReplicaSets.serving: the previous revision fills in); one with
   * an affinity key (thread, MCP session: replica-affinity.ts) to its thread's replica.
   */
  readyReplica(record: RunRecord, affinityKey?: string): Replica | undefined {
    const affinity = affinityKey === undefined ? undefined : { key: affinityKey, now: this.now() };
    return this.sets.serving(record.id, record.revision, affinity);
  }

  /**
   * The STANDBY seam of metering (ARCHITECTURE.md "Metering"): call when a replica is frozen
   * (`standby`) or thawed (`running`), so its time is billed where a sandbox's STANDBY goes.
   */
  meterPhase(replica: Pick<Replica, 'engineId'>, phase: UsagePhase): void {
    this.d.usage?.phase(replica.engineId, phase, this.now());
  }

  /** Pins an MCP session a replica made (seen in its answer) to that replica. */
  pinSession(replica: Replica, key: string): void {
    this.sets.pin(replica, key, this.now());
  }

  /**
   * Egress identities of every replica (compose.ts adds them to the proxy's live list), draining
   * ones included: a request they still serve may call out (a model, a tool).
   */
  liveReplicas(): Array<{ id: string; workspace: string; name: string; ip: string }> {
    return [...this.sets.all(), ...this.removing.values()].map((r) => ({
      id: r.credentialId,
      workspace: r.workspace,
      name: r.name,
      ip: r.ip,
    }));
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
    return adoptReplicas({ ...this.d, sets: this.sets, launcher: this.launcher, now: this.now });
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
      for (const set of this.sets.setsOf(id)) this.retire(id, set);
    }
    for (const [key, r] of before) if (!next.has(key)) this.d.onRecord?.(r.kind, r.workspace, r.name);
  }

  private async reconcile(record: RunRecord): Promise<void> {
    const now = this.now();
    for (const set of this.sets.setsOf(record.id)) await this.observe(record, set, now);
    const sets = this.sets.setsOf(record.id);
    if (!record.enabled) {
      for (const set of sets) this.retire(record.id, set);
      const draining = [...this.removing.values()].some((r) => r.recordId === record.id);
      if (this.sets.setsOf(record.id).length === 0 && !draining && record.status !== 'DEACTIVATED') {
        await this.d.catalogue.setStatus(
          record,
          'DEACTIVATED',
          `${label(record)} is disabled; no replica runs`,
        );
      }
      return;
    }
    if (BUILD_STATUSES.has(record.status) || !record.image) {
      // A rebuild: the set serving meanwhile keeps following its traffic (nothing new otherwise).
      const serving = sets.find((s) => s.revision === record.revision && s.replicas.some(isReady));
      if (serving && record.image) this.scaler.scale(record, serving, now);
      return;
    }
    const current = this.sets.set(record.id, record.revision);
    const ready = current.replicas.find((r) => r.phase === 'ready');
    if (ready) {
      if (ready.readyAtMs !== undefined && now - ready.readyAtMs > STABLE_AFTER_MS) current.crashes = 0;
      // The new revision serves: older sets go (a seam for canaries: ARCHITECTURE.md).
      for (const set of sets) if (set.revision !== record.revision) this.retire(record.id, set);
      if (record.status !== 'DEPLOYED') {
        await this.d.catalogue.setStatus(
          record,
          'DEPLOYED',
          `Replica ${ready.engineId} answers on port ${ready.port} (revision ${record.revision})`,
        );
      }
    }
    this.scaler.scale(record, current, now); // the autoscaler's count (replica-scaling.ts)
  }

  /** Starts one replica of the set in the lowest free slot (in the background). */
  private launch(record: RunRecord, set: ReplicaSet): void {
    const draining = [...this.removing.values()].filter((r) => r.recordId === record.id);
    const slot = this.sets.freeSlot(
      record.id,
      draining.map((r) => r.slot),
    );
    set.launchingSlots.add(slot);
    const attempt = set.nextAttempt++;
    void this.launcher
      .launch(record, slot, attempt, () => this.wanted(record))
      .then((out) => this.launched(record, set, out))
      .catch((err) => this.d.logger.error({ err, record: record.name }, 'replica launch failed'))
      .finally(() => {
        set.launchingSlots.delete(slot);
        this.kick();
      });
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
      if (set.revision !== record.revision || !record.enabled) continue;
      // Other replicas of the set still serve: the record stays as it is (the exit is logged).
      if (set.replicas.some((x) => x.phase === 'ready')) {
        this.d.logger.warn({ record: record.name, replica: r.engineId }, 'replica exited; others serve');
        continue;
      }
      const code = info?.exitCode ?? null;
      this.d.logger.warn({ record: record.name, replica: r.engineId, code }, 'replica exited');
      await this.d.catalogue.setStatus(
        record,
        'DEPLOYING',
        `Replica exited (code ${code ?? 'unknown'}); restarting in ${Math.round(backoffMs(set.crashes) / 1000)} s${tail(lastLines)}`,
      );
    }
  }

  /** Whether the record still asks for this revision's replica (not deleted, disabled, changed). */
  private wanted(record: RunRecord): boolean {
    const now = this.records.get(recordKey(record.kind, record.workspace, record.name));
    return now?.id === record.id && now.enabled && now.revision === record.revision;
  }

  private async launched(record: RunRecord, set: ReplicaSet, out: LaunchOutcome): Promise<void> {
    // A scale-up replica that fails while others serve: backoff and a log line, no FAILED status.
    const serving = set.replicas.some((r) => r.phase === 'ready');
    if (out.kind === 'cancelled') {
      const r = out.replica;
      await this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
      return;
    }
    if (out.kind === 'ready') {
      set.replicas.push(out.replica);
      this.d.onRecord?.(record.kind, record.workspace, record.name);
      return;
    }
    if (out.kind === 'error') {
      if (out.blocked) set.blocked = out.message;
      if (!out.transient) set.crashes++;
      set.notBeforeMs = this.now() + (out.transient ? 1000 : backoffMs(set.crashes));
      if (!out.transient && !serving)
        await this.d.catalogue.setStatus(record, 'FAILED', `Could not start a replica: ${out.message}`);
      return;
    }
    set.crashes++;
    set.notBeforeMs = this.now() + backoffMs(set.crashes);
    const r = out.replica;
    await this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
    if (serving) {
      this.d.logger.warn({ record: record.name, replica: r.engineId, outcome: out.kind }, 'scale-up failed');
      return;
    }
    const why =
      out.kind === 'exited'
        ? `exited (code ${out.exitCode ?? 'unknown'}) before listening on port ${r.port}`
        : `did not listen on port ${r.port} within ${Math.round(this.d.readyTimeoutMs / 1000)} s`;
    await this.d.catalogue.setStatus(
      record,
      'FAILED',
      `Replica ${why}; retrying in ${Math.round(backoffMs(set.crashes) / 1000)} s${tail(out.lastLines)}`,
    );
  }

  /**
   * Removes every replica of a set (in the background, once per container). Out of the sets first,
   * so no new request reaches it; then requests in flight (streams included) may finish, up to
   * `drainMs`, before SIGTERM (issue 16: "delete drains in-flight requests first").
   */
  private retire(recordId: string, set: ReplicaSet): void {
    for (const r of [...set.replicas]) this.drainAndRemove(r);
    this.sets.prune(recordId, set.revision);
  }

  /** Out of its set (no new request), drained, then stopped and removed (once per container). */
  private drainAndRemove(r: Replica): void {
    if (this.removing.has(r.engineId)) return;
    this.removing.set(r.engineId, r);
    this.sets.remove(r);
    void drained(r, this.d.drainMs ?? DEFAULT_DRAIN_MS)
      .then(() => this.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt))
      .catch(() => undefined)
      .finally(() => {
        this.removing.delete(r.engineId);
        this.kick();
      });
  }
}

/** Resolves once no request is in flight on the replica, or after `ms`. */
async function drained(r: Replica, ms: number): Promise<void> {
  for (const end = Date.now() + ms; r.inflight > 0 && Date.now() < end;) {
    await new Promise((res) => setTimeout(res, 50));
  }
}

const isReady = (r: Replica) => r.phase === 'ready';
const LABELS = { agent: 'Agent', function: 'Function', application: 'Application' } as const;
const label = (r: RunRecord) => LABELS[r.kind];
const tail = (lines: string) => (lines ? `; last log lines:\n${lines}` : '; it printed nothing');
