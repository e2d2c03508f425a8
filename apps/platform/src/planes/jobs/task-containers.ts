/**
 * The engine side of task attempts for the runner (job-runner.ts): inspect, stop once (timeout,
 * cancel, the execution's timeout), and clean up an ended attempt — keep its output (task-logs.ts),
 * remove its container, then its ephemeral volumes (task-volumes.ts). Also the sweep at start of
 * what a crash left: finished attempts' containers and volumes whose container is gone.
 */
import { SandboxNotFoundError, type SandboxInfo } from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { Logger } from 'pino';
import { isDone } from './execution-state.js';
import { systemOf, type ExecutionRow } from './execution-rows.js';
import type { TaskEngine } from './jobs-ports.js';
import { MAX_ATTEMPT_LOG_BYTES, type TaskLogArchive } from './task-logs.js';
import { containerOfVolume, removeTaskVolumes } from './task-volumes.js';

export interface TaskContainersDeps {
  engine: TaskEngine & { list(): Promise<SandboxInfo[]> };
  logs: TaskLogArchive;
  logger: Logger;
  getRow(id: string): Promise<ResourceRow<ExecutionRow['spec']> | undefined>;
  /** Told when a stop was delivered (the runner observes the exit at once). */
  onStopped: () => void;
}

export class TaskContainers {
  /** Containers being created right now: the engine may not know them yet. */
  readonly creating = new Set<string>();
  /** Containers a stop was sent to (timeout or cancel), so it is sent once. */
  private readonly stopping = new Set<string>();
  /** Container removals in flight, by execution row id. */
  private readonly cleaning = new Map<Promise<void>, string>();

  constructor(private readonly d: TaskContainersDeps) {}

  wasStopped(engineId: string): boolean {
    return this.stopping.has(engineId);
  }

  async inspect(engineId: string): Promise<SandboxInfo | undefined> {
    try {
      return await this.d.engine.inspect(engineId);
    } catch (err) {
      if (err instanceof SandboxNotFoundError) return undefined;
      throw err;
    }
  }

  stopOnce(engineId: string, graceSeconds: number): void {
    if (this.stopping.has(engineId)) return;
    this.stopping.add(engineId);
    this.d.engine.stopSandbox(engineId, graceSeconds).then(
      () => this.d.onStopped(),
      (err: unknown) => {
        this.stopping.delete(engineId);
        this.d.logger.warn(
          { err, container: engineId },
          'could not stop a task container; retried next pass',
        );
      },
    );
  }

  /**
   * Not awaited by the pass: removing a container takes a while and must not hold up the next
   * starts (settled() and idle() wait for these; a crash in between is swept at the next start).
   */
  cleanUpLater(rowId: string, index: number, attempt: number, engineId: string, volumes: number): void {
    const p = this.cleanUp(rowId, index, attempt, engineId, volumes);
    this.cleaning.set(p, rowId);
    void p.finally(() => this.cleaning.delete(p));
  }

  /** Resolves once no clean-up of this execution (or of any, without a row) is in flight. */
  async settled(rowId?: string): Promise<void> {
    for (;;) {
      const mine = [...this.cleaning].filter(([, id]) => rowId === undefined || id === rowId);
      if (mine.length === 0) return;
      await Promise.allSettled(mine.map(([p]) => p));
    }
  }

  /** Keeps the attempt's output, then removes its container and its volumes. */
  async cleanUp(
    rowId: string,
    index: number,
    attempt: number,
    engineId: string,
    volumes: number,
  ): Promise<void> {
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
    await removeTaskVolumes(this.d.engine, engineId, volumes).catch((err: unknown) =>
      this.d.logger.warn(
        { err, container: engineId },
        'could not remove a task volume; the next start sweeps it',
      ),
    );
  }

  /**
   * At start: task containers whose attempt is over (the platform stopped between recording the
   * end and removing the container) are archived and removed; live ones are left to the runner.
   * Then task volumes whose container no longer exists.
   */
  async sweep(): Promise<void> {
    const containers = await this.d.engine.list();
    for (const info of containers) {
      const rowId = info.labels.record;
      const index = Number(info.labels.task);
      if (!rowId || !info.id.startsWith('jt-') || !Number.isInteger(index)) continue;
      const row = await this.d.getRow(rowId);
      const run = row ? systemOf(row as ExecutionRow).runs[index] : undefined;
      if (run && run.engineId === info.id && !isDone(run)) continue;
      const volumes = row ? (systemOf(row as ExecutionRow).plan.volumes?.length ?? 0) : 0;
      await this.cleanUp(rowId, index, Number(info.labels.attempt) || 0, info.id, volumes);
    }
    const alive = new Set((await this.d.engine.list()).map((c) => c.id));
    for (const v of await this.d.engine.listVolumes()) {
      const owner = containerOfVolume(v.name);
      if (!owner || alive.has(owner)) continue;
      await this.d.engine
        .deleteVolume(v.name)
        .catch((err: unknown) =>
          this.d.logger.warn({ err, volume: v.name }, 'could not remove a task volume'),
        );
    }
  }
}
