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
import { IdlePolicy, type IdleSettings } from './idle-policy.js';
import { adoptReplicas } from './replica-adoption.js';
import { ReplicaDrainer } from './replica-drain.js';
import { settleLaunch, tail } from './launch-outcome.js';
import { ReplicaLauncher } from './replica-launcher.js';
import { SetScaler } from './replica-scaling.js';
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
} from './run-ports.js';
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
  /** Target concurrency, windows, ceilings (TARMAC_RUN_TARGET_CONCURRENCY …; autoscaler.ts). */
  autoscale?: AutoscaleSettings;
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
  readonly autoscaler: Autoscaler;
  readonly scaler: SetScaler;
  private readonly now: () => number;
  /** The first pass after start (a DEPLOYED scale-to-zero record with no container sleeps). */
  private firstPass = true;
  private records = new Map<string, RunRecord>();
  /** Replicas draining and being removed (out of their set, still live: replica-drain.ts). */
  private readonly drainer: ReplicaDrainer;
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
    this.drainer = new ReplicaDrainer({
      ...d,
      sets: this.sets,
      launcher: this.launcher,
      done: () => this.kick(),
    });
    this.idle = new IdlePolicy({
      ...(d.idle ?? { standbyAfterMs: 0, stopAfterMs: 0 }),
      sets: this.sets,
      engine: d.engine,
      catalogue: d.catalogue,
      ...(d.dropIdle ? { dropIdle: d.dropIdle } : {}),
      recordOf: (r) => this.records.get(recordKey(r.kind, r.workspace, r.name)),
      remove: (r) => this.drainAndRemove(r),
      kick: () => this.kick(),
      meterPhase: (r, phase) => this.meterPhase(r, phase),
      logger: d.logger,
      now: this.now,
    });
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
   * The replica a request goes to (ReplicaSets.serving: the previous revision fills in; one with
   * an affinity key — thread, MCP session: replica-affinity.ts — to its thread's replica), resumed
   * at once when it is in STANDBY; none while the set sleeps after scale to zero wakes it
   * (idle-policy.ts claim) and the gateway holds the request until a replica answers.
   */
  readyReplica(record: RunRecord, affinityKey?: string): Replica | undefined {
    const affinity = affinityKey === undefined ? undefined : { key: affinityKey, now: this.now() };
    const serving = this.sets.serving(record.id, record.revision, affinity);
    return this.idle.claim(record, serving, this.sets.get(record.id, record.revision));
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
    return [...this.sets.all(), ...this.drainer.all()].map((r) => ({
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
      for (const set of this.sets.setsOf(id)) this.retire(id, set);
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
      for (const set of sets) this.retire(record.id, set);
      const draining = this.drainer.of(record.id).length > 0;
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
      const serving = sets.find((s) => s.revision === record.revision && s.replicas.some(isUp));
      if (serving && record.image) this.scaler.scale(record, serving, now);
      return;
    }
    const fresh = !this.sets.get(record.id, record.revision);
    const current = this.sets.set(record.id, record.revision);
    // After a restart, a DEPLOYED scale-to-zero record without a container was stopped for
    // idleness (or the host rebooted): it stays at zero until a request wakes it.
    if (this.firstPass && fresh && record.status === 'DEPLOYED' && this.sleepsAtZero(record))
      current.asleep = true;
    const ready = current.replicas.find(isUp);
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
    const slot = this.sets.freeSlot(
      record.id,
      this.drainer.of(record.id).map((r) => r.slot),
    );
    set.launchingSlots.add(slot);
    if (set.wokenAtMs !== undefined)
      this.d.logger.debug({ record: record.name, afterMs: this.now() - set.wokenAtMs }, 'woken set launches');
    const attempt = set.nextAttempt++;
    void this.launcher
      .launch(record, slot, attempt, () => this.wanted(record))
      .then((out) =>
        settleLaunch(
          { ...this.d, launcher: this.launcher, idle: this.idle, now: this.now },
          record,
          set,
          out,
        ),
      )
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
      if (set.replicas.some(isUp)) {
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

  /**
   * Removes every replica of a set (in the background, once per container). Out of the sets first,
   * so no new request reaches it; then requests in flight (streams included) may finish, up to
   * `drainMs`, before SIGTERM (issue 16: "delete drains in-flight requests first").
   */
  private retire(recordId: string, set: ReplicaSet): void {
    for (const r of [...set.replicas]) this.drainAndRemove(r);
    this.sets.prune(recordId, set.revision);
  }

  private drainAndRemove(r: Replica): void {
    this.drainer.drainAndRemove(r);
  }

  /** Whether a record's replicas are stopped after the idle window (minScale 0, stop enabled). */
  private sleepsAtZero(record: RunRecord): boolean {
    return record.minScale === 0 && (this.d.idle?.stopAfterMs ?? 0) > 0;
  }
}

const LABELS = { agent: 'Agent', function: 'Function', application: 'Application' } as const;
const label = (r: RunRecord) => LABELS[r.kind];
