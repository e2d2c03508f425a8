/**
 * The job runner (issue 17, ARCHITECTURE.md beside this file): turns execution rows into task
 * containers on the sandbox engine. Level-triggered like the sandbox controller: each pass reads
 * the active rows and the engine and converges —
 *   observe: a started container that stopped → succeeded / retry with backoff / failed;
 *            one past its timeout → killed, `timeout`; a cancelling execution's, or one past the
 *            execution's own timeout → SIGTERM + grace, its waiting tasks never start;
 *   start:   pending tasks whose backoff is over, while the execution is under its parallelism
 *            and the workspace under its capacity (the rest wait: execution `queued`).
 * Pure rules: task-transitions.ts; engine side (stop, clean up, sweep): task-containers.ts.
 * A task's container id is written (phase `starting`) before the container is created, so a
 * platform that dies at any point re-attaches after a restart and never starts a task twice.
 */
import { InsufficientCapacityError, isTransientHostError } from '@tarmac/engine';
import { JOB_EXECUTION_KIND } from '../../framework/kinds.js';
import { ACTIVE_EXECUTION, isLive, type TaskRun } from './execution-state.js';
import { ExecutionRows, systemOf, type ExecutionRow } from './execution-rows.js';
import type { JobRunnerDeps, LiveTask } from './job-runner-deps.js';
import { taskContainerSpec, taskCredentialId, taskEngineId } from './task-container.js';
import { TaskContainers } from './task-containers.js';
import { endedRun, failedRun, isExpired, vanishedRun } from './task-transitions.js';
import { makeTaskVolumes, removeTaskVolumes } from './task-volumes.js';

export type { JobRunnerDeps, LiveTask, TaskUsage } from './job-runner-deps.js';

export class JobRunner {
  readonly rows: ExecutionRows;
  private readonly now: () => number;
  private readonly containers: TaskContainers;
  private readonly live = new Map<string, LiveTask>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** Active executions the last pass saw, and when it ran: an idle runner polls the store rarely. */
  private lastActive = 0;
  private lastPassAt = 0;
  /** Passes run only between start() and stop(). */
  private started = false;
  private stopped = false;

  constructor(private readonly d: JobRunnerDeps) {
    this.now = d.now ?? Date.now;
    this.rows = new ExecutionRows(d.resources, this.now);
    this.containers = new TaskContainers({
      engine: d.engine,
      logs: d.logs,
      logger: d.logger,
      getRow: (id) => d.resources.getById<ExecutionRow['spec']>(id),
      onStopped: () => this.kick(),
    });
  }

  /** Re-attaches what survived a restart (cleans finished containers), then runs passes. */
  async start(): Promise<void> {
    this.started = true;
    await this.containers.sweep().catch((err) => this.d.logger.error({ err }, 'job container sweep failed'));
    await this.pass();
    // Every tick while executions are active (timeouts, backoffs, exits). With none, a pass only
    // every idleTickMs: every way an execution becomes active (create, cancel, a container that
    // stops) kicks a pass at once, so idle polling only guards against a missed notice. It keeps
    // the store queries (and their garbage) off the event loop that serves every request.
    const idleTickMs = this.d.idleTickMs ?? 2000;
    this.timer = setInterval(() => {
      if (this.lastActive === 0 && this.now() - this.lastPassAt < idleTickMs) return;
      this.kick();
    }, this.d.tickMs ?? 100);
    this.timer.unref();
  }

  /** Stops the loop; task containers keep running (a restarted platform re-attaches). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.passing;
    await this.containers.settled();
    await this.rows.idle();
  }

  /**
   * Resolves once the execution is over and its containers and volumes are gone (deleting a job
   * waits for this after cancelling, so nothing of it outlives the record), or rejects after `ms`.
   */
  async settled(rowId: string, ms: number): Promise<void> {
    const deadline = this.now() + ms;
    for (;;) {
      const row = await this.d.resources.getById<ExecutionRow['spec']>(rowId);
      if (!row || !ACTIVE_EXECUTION.includes(row.status as never)) break;
      if (this.now() > deadline) throw new Error(`execution ${row.name} still ${row.status}`);
      this.kick();
      await new Promise((r) => setTimeout(r, 100));
    }
    // The pass that wrote the end registers its clean-ups right after that write: let it finish.
    await this.passing;
    await this.rows.idle();
    await this.containers.settled(rowId);
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
    const info = await this.containers.inspect(run.engineId);
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

  activeExecutions(): Promise<ExecutionRow[]> {
    return this.activeRows();
  }

  private activeRows(): Promise<ExecutionRow[]> {
    return this.d.resources.listByKind<ExecutionRow['spec']>(JOB_EXECUTION_KIND, {
      status: ACTIVE_EXECUTION,
    });
  }

  private async pass(): Promise<void> {
    this.lastPassAt = this.now();
    const rows = await this.activeRows();
    this.lastActive = rows.length;
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
    const expired = isExpired(row.createdAt, sys.plan, sys.expiredAt, now);
    // Cancel and the execution's own timeout wind down alike: SIGTERM + grace, nothing new.
    const windDown = cancelling || expired;
    const ended = new Map<number, TaskRun>();
    for (const [i, r] of sys.runs.entries()) {
      if (!isLive(r) || !r.engineId || this.containers.creating.has(r.engineId)) continue;
      const info = await this.containers.inspect(r.engineId);
      if (!info) {
        ended.set(i, vanishedRun(r, sys.plan.maxRetries, expired && !cancelling, now));
        continue;
      }
      if (info.status === 'STOPPED') {
        ended.set(
          i,
          endedRun(r, info, sys.plan, {
            cancelling,
            expired,
            stoppedForTimeout: this.containers.wasStopped(r.engineId),
            now,
          }),
        );
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
      if (windDown) this.containers.stopOnce(r.engineId, sys.plan.graceSeconds);
      else if (now - startedMs >= sys.plan.timeoutSeconds * 1000) this.containers.stopOnce(r.engineId, 0);
    }
    const pendingLeft = windDown && sys.runs.some((r) => r.phase === 'pending');
    const newlyExpired = expired && !sys.expiredAt;
    if (
      ended.size === 0 &&
      !pendingLeft &&
      !newlyExpired &&
      !(cancelling && sys.runs.every((r) => !isLive(r)))
    )
      return row;
    const written = await this.rows.mutate(row.id, (current, runs) => {
      for (const [i, next] of ended) {
        if (runs[i]?.engineId === sys.runs[i]?.engineId && isLive(runs[i]!)) runs[i] = next;
      }
      const stillCancelling = current.status === 'cancelling';
      if (stillCancelling || expired) {
        for (const [i, r] of runs.entries()) {
          if (r.phase !== 'pending') continue;
          runs[i] = stillCancelling
            ? { ...r, phase: 'cancelled', outcome: 'cancelled' }
            : { ...r, phase: 'cancelled', outcome: 'deadline' };
        }
      }
      return { runs, ...(expired ? { expired: true } : {}) };
    });
    if (newlyExpired)
      this.d.logger.info(
        { execution: row.name, job: row.parent, timeoutSeconds: sys.plan.executionTimeoutSeconds },
        'job execution timed out: stopping its tasks',
      );
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
      this.containers.cleanUpLater(
        row.id,
        i,
        before.attempts,
        before.engineId,
        sys.plan.volumes?.length ?? 0,
      );
    }
    if (written && written.status !== row.status)
      this.d.logger.info(
        { execution: row.name, job: row.parent, status: written.status },
        'job execution status',
      );
    return written;
  }

  private async startTasks(row: ExecutionRow, load: Map<string, number>): Promise<void> {
    const sys = systemOf(row);
    const now = this.now();
    if (isExpired(row.createdAt, sys.plan, sys.expiredAt, now)) return;
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
      if (current.status === 'cancelling' || systemOf(current).expiredAt) return undefined;
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
      this.containers.creating.add(c.engineId);
      void this.launch(row, c.index, c.attempt, c.engineId);
    }
  }

  private async launch(row: ExecutionRow, index: number, attempt: number, engineId: string): Promise<void> {
    const plan = systemOf(row).plan;
    const volumeCount = plan.volumes?.length ?? 0;
    try {
      const volumes = await makeTaskVolumes(this.d.engine, engineId, plan.volumes ?? []);
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
        volumes,
        ...(plan.rootDiskMB ? { diskMB: plan.rootDiskMB } : {}),
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
      await removeTaskVolumes(this.d.engine, engineId, volumeCount).catch(() => undefined);
      const now = this.now();
      await this.rows.mutate(row.id, (_r, runs) => {
        const r = runs[index];
        if (r?.engineId !== engineId || r.phase !== 'starting') return undefined;
        // Short of capacity: wait and try again without spending an attempt.
        runs[index] = transient
          ? { phase: 'pending', attempts: r.attempts - 1, notBefore: now + 1000 }
          : failedRun(r, plan.maxRetries, 'error', null, now);
        return { runs };
      });
    } finally {
      this.containers.creating.delete(engineId);
      this.kick();
    }
  }
}
