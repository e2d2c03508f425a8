/**
 * The job runner (issue 17, ARCHITECTURE.md beside this file): turns execution rows into task
 * containers on the sandbox engine. Level-triggered like the sandbox controller: each pass reads
 * the active rows and the engine and converges —
 *   observe: a started container that stopped → succeeded / retry with backoff / failed;
 *            one past its timeout → killed, `timeout`; a cancelling execution's → SIGTERM + grace;
 *   start:   pending tasks whose backoff is over, while the execution is under its parallelism
 *            and the workspace under its capacity (the rest wait: execution `queued`).
 * A task's container id is written (phase `starting`) before the container is created, so a
 * platform that dies at any point re-attaches after a restart and never starts a task twice.
 */
import {
  InsufficientCapacityError,
  isTransientHostError,
  SandboxNotFoundError,
  type SandboxInfo,
} from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { Logger } from 'pino';
import { JOB_EXECUTION_KIND } from '../../framework/kinds.js';
import { ACTIVE_EXECUTION, backoffMs, isDone, isLive, type TaskRun } from './execution-state.js';
import { ExecutionRows, systemOf, type ExecutionRow, type ExecutionRowStore } from './execution-rows.js';
import type { Sealer, TaskEngine, TaskSetup } from './jobs-ports.js';
import { taskContainerSpec, taskCredentialId, taskEngineId } from './task-container.js';
import { MAX_ATTEMPT_LOG_BYTES, type TaskLogArchive } from './task-logs.js';

export interface TaskUsage {
  workspace: string;
  job: string;
  rowId: string;
  memoryMB: number;
  startedMs: number;
  endedMs: number;
}

export interface JobRunnerDeps {
  resources: ExecutionRowStore & {
    listByKind<S>(kind: string, filter?: { status?: readonly string[] }): Promise<ResourceRow<S>[]>;
  };
  engine: TaskEngine & { list(): Promise<SandboxInfo[]> };
  setup: TaskSetup;
  sealer: Sealer;
  logs: TaskLogArchive;
  /** BL_EXECUTION_DATA_URL of an execution row, when the data server runs. */
  dataUrl: (rowId: string) => string | undefined;
  logger: Logger;
  /** Task containers running at once per workspace (TARMAC_JOBS_WORKSPACE_CAPACITY). */
  capacityPerWorkspace: number;
  tickMs?: number;
  now?: () => number;
  /** Told when an attempt's container ended (metering: job_compute_runtime_gbs). */
  onUsage?: (usage: TaskUsage) => void;
}

/** An egress identity of a running task (the proxy checks credentials and source address). */
export interface LiveTask {
  id: string;
  workspace: string;
  name: string;
  ip: string;
}

export class JobRunner {
  readonly rows: ExecutionRows;
  private readonly now: () => number;
  /** Containers being created right now: the engine may not know them yet. */
  private readonly creating = new Set<string>();
  /** Containers a stop was sent to (timeout or cancel), so it is sent once. */
  private readonly stopping = new Set<string>();
  private readonly live = new Map<string, LiveTask>();
  /** Container removals in flight. */
  private readonly cleaning = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** Passes run only between start() and stop(). */
  private started = false;
  private stopped = false;

  constructor(private readonly d: JobRunnerDeps) {
    this.now = d.now ?? Date.now;
    this.rows = new ExecutionRows(d.resources, this.now);
  }

  /** Re-attaches what survived a restart (cleans finished containers), then runs passes. */
  async start(): Promise<void> {
    this.started = true;
    await this.sweepContainers().catch((err) => this.d.logger.error({ err }, 'job container sweep failed'));
    await this.pass();
    this.timer = setInterval(() => this.kick(), this.d.tickMs ?? 100);
    this.timer.unref();
  }

  /** Stops the loop; task containers keep running (a restarted platform re-attaches). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.passing;
    await Promise.allSettled([...this.cleaning]);
    await this.rows.idle();
  }

  private track(p: Promise<void>): void {
    this.cleaning.add(p);
    void p.finally(() => this.cleaning.delete(p));
  }

  /** Egress identities of running tasks (compose.ts adds them to the proxy's live list). */
  liveTasks(): LiveTask[] {
    return [...this.live.values()];
  }

  /**
   * The egress identity of a task whose container runs but whose start is not recorded yet (its
   * command's first request can beat createSandbox's return): read from the row and the engine.
   */
  async findLiveTask(credentialId: string): Promise<LiveTask | undefined> {
    const known = this.live.get(credentialId);
    if (known) return known;
    const m = /^(.+)\.(\d+)$/.exec(credentialId);
    if (!m) return undefined;
    const row = await this.d.resources.getById<ExecutionRow['spec']>(m[1]!);
    const run = row ? systemOf(row as ExecutionRow).runs[Number(m[2])] : undefined;
    if (!row || !run?.engineId || !isLive(run)) return undefined;
    const info = await this.inspect(run.engineId);
    if (!info || info.status === 'STOPPED') return undefined;
    return { id: credentialId, workspace: row.workspace, name: row.name, ip: info.ip };
  }

  /** A coalesced pass: one runs at a time, and one more after it if asked meanwhile. */
  kick(): void {
    if (!this.started || this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((err) => this.d.logger.error({ err }, 'job runner pass failed; the next one retries'))
      .finally(() => {
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Tasks starting or running in a workspace now (capacity and `allowQueue: false`). */
  async workspaceLoad(workspace: string): Promise<{ live: number; waiting: number }> {
    const rows = await this.activeRows();
    let live = 0;
    let waiting = 0;
    for (const row of rows) {
      if (row.workspace !== workspace) continue;
      const runs = systemOf(row).runs;
      live += runs.filter(isLive).length;
      waiting += runs.filter((r) => r.phase === 'pending').length;
    }
    return { live, waiting };
  }

  get capacityPerWorkspace(): number {
    return this.d.capacityPerWorkspace;
  }

  private activeRows(): Promise<ExecutionRow[]> {
    return this.d.resources.listByKind<ExecutionRow['spec']>(JOB_EXECUTION_KIND, {
      status: ACTIVE_EXECUTION,
    });
  }

  private async pass(): Promise<void> {
    const rows = await this.activeRows();
    const observed: ExecutionRow[] = [];
    for (const row of rows) observed.push((await this.observe(row)) ?? row);
    const load = new Map<string, number>();
    for (const row of observed) {
      const n = systemOf(row).runs.filter(isLive).length;
      load.set(row.workspace, (load.get(row.workspace) ?? 0) + n);
    }
    for (const row of observed) {
      if (row.status === 'cancelling' || this.stopped) continue;
      await this.startTasks(row, load);
    }
  }

  /** Exits, timeouts and cancels of one execution's live tasks; answers the row after writes. */
  private async observe(row: ExecutionRow): Promise<ExecutionRow | undefined> {
    const sys = systemOf(row);
    const now = this.now();
    const cancelling = row.status === 'cancelling';
    const ended = new Map<number, TaskRun>();
    for (const [i, r] of sys.runs.entries()) {
      if (!isLive(r) || !r.engineId || this.creating.has(r.engineId)) continue;
      const info = await this.inspect(r.engineId);
      if (!info) {
        // Made nowhere (died before create finished): start it again, it never ran. Running and
        // gone (host restarted): the attempt failed.
        ended.set(
          i,
          r.phase === 'starting'
            ? { ...r, phase: 'pending', attempts: r.attempts - 1 }
            : this.failed(r, sys.plan.maxRetries, 'error', null, now),
        );
        continue;
      }
      if (info.status === 'STOPPED') {
        ended.set(i, this.ended(r, info, cancelling, sys.plan, now));
        continue;
      }
      const startedMs = r.startedMs ?? now;
      if (r.phase === 'starting') ended.set(i, { ...r, phase: 'running', ip: info.ip, startedMs });
      this.live.set(taskCredentialId(row.id, i), {
        id: taskCredentialId(row.id, i),
        workspace: row.workspace,
        name: row.name,
        ip: info.ip,
      });
      if (cancelling) this.stopOnce(r.engineId, sys.plan.graceSeconds);
      else if (now - startedMs >= sys.plan.timeoutSeconds * 1000) this.stopOnce(r.engineId, 0);
    }
    const pendingCancelled = cancelling && sys.runs.some((r) => r.phase === 'pending');
    if (ended.size === 0 && !pendingCancelled && !(cancelling && sys.runs.every((r) => !isLive(r))))
      return row;
    const written = await this.rows.mutate(row.id, (_row, runs) => {
      for (const [i, next] of ended) {
        if (runs[i]?.engineId === sys.runs[i]?.engineId && isLive(runs[i]!)) runs[i] = next;
      }
      if (cancelling) {
        for (const [i, r] of runs.entries()) {
          if (r.phase === 'pending') runs[i] = { ...r, phase: 'cancelled', outcome: 'cancelled' };
        }
      }
      return { runs };
    });
    for (const [i, next] of ended) {
      const before = sys.runs[i]!;
      if (isLive(next) || !before.engineId) continue;
      this.live.delete(taskCredentialId(row.id, i));
      if (before.phase === 'running' && before.startedMs !== undefined) {
        this.d.onUsage?.({
          workspace: row.workspace,
          job: row.parent,
          rowId: row.id,
          memoryMB: sys.plan.memoryMB,
          startedMs: before.startedMs,
          endedMs: now,
        });
      }
      // Not awaited: removing a container takes a while and must not hold up the next starts
      // (stop() waits for these; a crash in between is swept at the next start).
      this.track(this.cleanUp(row.id, i, before.attempts, before.engineId));
    }
    if (written && written.status !== row.status)
      this.d.logger.info(
        { execution: row.name, job: row.parent, status: written.status },
        'job execution status',
      );
    return written;
  }

  /** The next state of a task whose container stopped. */
  private ended(
    r: TaskRun,
    info: SandboxInfo,
    cancelling: boolean,
    plan: { timeoutSeconds: number; maxRetries: number },
    now: number,
  ): TaskRun {
    const base = { ...r, exitCode: info.exitCode };
    delete base.ip;
    if (info.exitCode === 0) return { ...base, phase: 'succeeded' };
    if (cancelling) return { ...base, phase: 'cancelled', outcome: 'cancelled' };
    const ranMs = now - (r.startedMs ?? now);
    // Killed by us for its timeout (also judged after a restart: the start time is persisted).
    if (this.stopping.has(r.engineId ?? '') || ranMs >= plan.timeoutSeconds * 1000) {
      return { ...base, phase: 'failed', outcome: 'timeout' };
    }
    return this.failed(base, plan.maxRetries, 'exit', info.exitCode, now);
  }

  /** A failed attempt: again after the backoff while retries are left (issue 17), else failed. */
  private failed(
    r: TaskRun,
    maxRetries: number,
    outcome: 'exit' | 'error',
    exitCode: number | null,
    now: number,
  ): TaskRun {
    const next: TaskRun = { ...r, exitCode, outcome };
    delete next.ip;
    if (r.attempts <= maxRetries) {
      delete next.engineId;
      delete next.startedMs;
      return { ...next, phase: 'pending', notBefore: now + backoffMs(r.attempts) };
    }
    return { ...next, phase: 'failed' };
  }

  private async startTasks(row: ExecutionRow, load: Map<string, number>): Promise<void> {
    const sys = systemOf(row);
    const now = this.now();
    const parallelism = row.spec.parallelism;
    let running = sys.runs.filter(isLive).length;
    const picks: number[] = [];
    for (const [i, r] of sys.runs.entries()) {
      if (r.phase !== 'pending' || (r.notBefore ?? 0) > now) continue;
      const inWorkspace = load.get(row.workspace) ?? 0;
      if (running >= parallelism || inWorkspace >= this.d.capacityPerWorkspace) break;
      picks.push(i);
      running++;
      load.set(row.workspace, inWorkspace + 1);
    }
    if (picks.length === 0) return;
    const claimed: Array<{ index: number; attempt: number; engineId: string }> = [];
    await this.rows.mutate(row.id, (current, runs) => {
      if (current.status === 'cancelling') return undefined;
      for (const i of picks) {
        const r = runs[i];
        if (!r || r.phase !== 'pending') continue;
        const attempt = r.attempts + 1;
        const engineId = taskEngineId(row.id, i, attempt);
        runs[i] = {
          phase: 'starting',
          attempts: attempt,
          engineId,
          ...(r.outcome ? { outcome: r.outcome } : {}),
        };
        claimed.push({ index: i, attempt, engineId });
      }
      return { runs };
    });
    for (const c of claimed) {
      this.creating.add(c.engineId);
      void this.launch(row, c.index, c.attempt, c.engineId);
    }
  }

  private async launch(row: ExecutionRow, index: number, attempt: number, engineId: string): Promise<void> {
    const plan = systemOf(row).plan;
    try {
      const env = JSON.parse(this.d.sealer.open(plan.envSealed, row.id)) as Record<string, string>;
      const spec = taskContainerSpec({
        engineId,
        image: plan.image,
        memoryMB: plan.memoryMB,
        index,
        attempt,
        workspace: row.workspace,
        job: row.parent,
        execution: row.name,
        rowId: row.id,
        env,
        defaults: await this.d.setup.defaults(taskCredentialId(row.id, index)),
        dataUrl: this.d.dataUrl(row.id),
      });
      const info = await this.d.engine.createSandbox(spec);
      const startedMs = this.now();
      this.live.set(taskCredentialId(row.id, index), {
        id: taskCredentialId(row.id, index),
        workspace: row.workspace,
        name: row.name,
        ip: info.ip,
      });
      await this.rows.mutate(row.id, (_r, runs) => {
        const r = runs[index];
        if (r?.engineId !== engineId || r.phase !== 'starting') return undefined;
        runs[index] = { ...r, phase: 'running', ip: info.ip, startedMs };
        return { runs };
      });
    } catch (err) {
      const transient = isTransientHostError(err) || err instanceof InsufficientCapacityError;
      this.d.logger.warn(
        { err, execution: row.name, task: index, transient },
        'task container did not start',
      );
      const now = this.now();
      await this.rows.mutate(row.id, (_r, runs) => {
        const r = runs[index];
        if (r?.engineId !== engineId || r.phase !== 'starting') return undefined;
        // Short of capacity: wait and try again without spending an attempt.
        runs[index] = transient
          ? { phase: 'pending', attempts: r.attempts - 1, notBefore: now + 1000 }
          : this.failed(r, plan.maxRetries, 'error', null, now);
        return { runs };
      });
    } finally {
      this.creating.delete(engineId);
      this.kick();
    }
  }

  private stopOnce(engineId: string, graceSeconds: number): void {
    if (this.stopping.has(engineId)) return;
    this.stopping.add(engineId);
    this.d.engine.stopSandbox(engineId, graceSeconds).then(
      () => this.kick(),
      (err: unknown) => {
        this.stopping.delete(engineId);
        this.d.logger.warn(
          { err, container: engineId },
          'could not stop a task container; retried next pass',
        );
      },
    );
  }

  /** Keeps the attempt's output (task-logs.ts), then removes its container. */
  private async cleanUp(rowId: string, index: number, attempt: number, engineId: string): Promise<void> {
    try {
      const log = await this.d.engine.readLog(engineId, 0, MAX_ATTEMPT_LOG_BYTES);
      this.d.logs.append(rowId, index, attempt, log.text);
      await this.d.engine.deleteSandbox(engineId);
    } catch (err) {
      if (!(err instanceof SandboxNotFoundError)) {
        this.d.logger.warn(
          { err, container: engineId },
          'could not remove a task container; the next start sweeps it',
        );
      }
    } finally {
      this.stopping.delete(engineId);
    }
  }

  /**
   * At start: task containers whose attempt is over (the platform stopped between recording the
   * end and removing the container) are archived and removed; live ones are left to observe().
   */
  private async sweepContainers(): Promise<void> {
    for (const info of await this.d.engine.list()) {
      const rowId = info.labels.record;
      const index = Number(info.labels.task);
      if (!rowId || !info.id.startsWith('jt-') || !Number.isInteger(index)) continue;
      const row = await this.d.resources.getById<ExecutionRow['spec']>(rowId);
      const run = row ? systemOf(row as ExecutionRow).runs[index] : undefined;
      if (run && run.engineId === info.id && !isDone(run)) continue;
      await this.cleanUp(rowId, index, Number(info.labels.attempt) || 0, info.id);
    }
  }

  private async inspect(engineId: string): Promise<SandboxInfo | undefined> {
    try {
      return await this.d.engine.inspect(engineId);
    } catch (err) {
      if (err instanceof SandboxNotFoundError) return undefined;
      throw err;
    }
  }
}
