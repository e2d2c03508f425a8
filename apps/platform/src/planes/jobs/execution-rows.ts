/**
 * Writes to execution rows, one at a time per row (a promise chain per row id): the runner's
 * passes, container start completions and cancel all change the same row, so they are serialized
 * here instead of fighting over the row's revision. Every write recomputes the reference's view
 * (tasks, stats, status, startedAt/completedAt) from the runs, so they always agree.
 */
import type { JobExecution } from '@tarmac/contract';
import type { ResourcePatch, ResourceRow } from '@tarmac/store';
import { patchById } from '../../framework/read-modify-write.js';
import {
  conditionOf,
  durationText,
  executionStatusOf,
  statsOf,
  taskName,
  taskStatus,
  TERMINAL_EXECUTION,
  type ExecutionStatus,
  type ExecutionSystem,
  type TaskRun,
} from './execution-state.js';

export type ExecutionRow = ResourceRow<JobExecution['spec']>;

/** Event type recording how many task containers an execution has from its time on (metering). */
export const TASKS_EVENT = 'Tasks';

export interface ExecutionRowStore {
  getById<S>(id: string): Promise<ResourceRow<S> | undefined>;
  update<S>(id: string, patch: ResourcePatch, expectedRevision: number): Promise<ResourceRow<S>>;
}

export function systemOf(row: ExecutionRow): ExecutionSystem {
  return row.system as ExecutionSystem;
}

/**
 * What a change may do: new runs (same length), optionally a new status (cancelling), and mark the
 * execution's timeout exceeded (`expired`).
 */
export interface RowChange {
  runs?: TaskRun[];
  status?: ExecutionStatus;
  expired?: boolean;
}

export class ExecutionRows {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: ExecutionRowStore,
    private readonly now: () => number,
  ) {}

  /** Applies `change` to the row's current state under the row's lock; answers the written row. */
  mutate(
    id: string,
    change: (row: ExecutionRow, runs: TaskRun[]) => RowChange | undefined,
  ): Promise<ExecutionRow | undefined> {
    const prev = this.chains.get(id) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(() =>
        patchById<JobExecution['spec']>(this.store, id, (row) => {
          if (TERMINAL_EXECUTION.includes(row.status as ExecutionStatus)) return undefined;
          const runs = systemOf(row).runs.map((r) => ({ ...r }));
          const c = change(row, runs);
          if (!c) return undefined;
          return this.patch(row, c.runs ?? runs, c.status ?? (row.status as ExecutionStatus), c.expired);
        }),
      );
    const tail = next.finally(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    this.chains.set(id, tail);
    return next;
  }

  /** Resolves once no write is queued (shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.allSettled([...this.chains.values()]);
  }

  private patch(
    row: ExecutionRow,
    runs: TaskRun[],
    requested: ExecutionStatus,
    expired: boolean | undefined,
  ): ResourcePatch {
    const at = new Date(this.now()).toISOString();
    const system = systemOf(row);
    const status = executionStatusOf(requested, runs);
    const previous = system.tasks;
    const tasks = runs.map((r, i) => {
      const before = previous[i];
      const condition = conditionOf(r, system.plan, at);
      const changed = before?.status !== taskStatus(r);
      return {
        metadata: {
          name: taskName(i),
          createdAt: before?.metadata.createdAt ?? row.createdAt,
          ...(before?.metadata.scheduledAt ? { scheduledAt: before.metadata.scheduledAt } : {}),
          ...(r.phase === 'starting' && !before?.metadata.scheduledAt ? { scheduledAt: at } : {}),
          ...(r.startedMs ? { startedAt: new Date(r.startedMs).toISOString() } : {}),
          ...(['succeeded', 'failed', 'cancelled'].includes(r.phase)
            ? { completedAt: before?.metadata.completedAt ?? at }
            : {}),
          updatedAt: changed ? at : (before?.metadata.updatedAt ?? at),
        },
        spec: { maxRetries: system.plan.maxRetries, timeout: durationText(system.plan.timeoutSeconds) },
        status: taskStatus(r),
        conditions: condition ? [condition] : [],
      };
    });
    const started = runs.some((r) => r.attempts > 0);
    // Metering (planes/metering job source): every change of the number of task containers is an
    // event, so usage is split exactly where it changed.
    const liveNow = runs.filter((r) => r.phase === 'starting' || r.phase === 'running').length;
    const liveBefore = system.runs.filter((r) => r.phase === 'starting' || r.phase === 'running').length;
    const events =
      liveNow === liveBefore
        ? undefined
        : [
            ...row.events,
            {
              type: TASKS_EVENT,
              status: String(liveNow),
              message: `${liveNow} task container${liveNow === 1 ? '' : 's'} running`,
              revision: '',
              canaryRevision: '',
              time: at,
            },
          ];
    return {
      ...(events ? { events } : {}),
      status,
      system: {
        ...system,
        runs,
        tasks,
        stats: statsOf(runs),
        ...(started && !system.startedAt ? { startedAt: at } : {}),
        ...(expired && !system.expiredAt ? { expiredAt: at } : {}),
        ...(TERMINAL_EXECUTION.includes(status) ? { completedAt: at } : {}),
      },
      updatedAt: at,
    };
  }
}
