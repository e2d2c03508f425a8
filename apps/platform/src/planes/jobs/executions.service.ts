/**
 * Job executions, the write side (issue 17; reference §1.4, §2.4): create (idempotent `id`,
 * memory bound, `allowQueue: false` → 429), cancel, the task list and task logs. The read side
 * (list, get) stays with the job record in planes/catalogue/jobs; rows are shared through the
 * store (kind `job-execution`, parent = the job's name).
 */
import { randomUUID } from 'node:crypto';
import {
  DEFAULT_PARALLELISM,
  type CreateJobExecutionOutput,
  type CreateJobExecutionRequest,
  type JobExecution,
  type JobTaskLogs,
} from '@tarmac/contract';
import { ApiError, invalidField, notFound, type PageRequest, type PageResult } from '@tarmac/server-kit';
import { UniqueViolationError, type NewResource, type ResourceRow } from '@tarmac/store';
import { JOB_EXECUTION_KIND } from '../../framework/kinds.js';
import { isLive, taskName, type ExecutionSystem, type TaskRun } from './execution-state.js';
import { systemOf, type ExecutionRow } from './execution-rows.js';
import type { JobRunner } from './job-runner.js';
import type { JobCatalogue, JobRecord, Sealer, TaskEngine, TaskSetup } from './jobs-ports.js';

type JobRecordSpec = JobRecord['spec'];
import type { TaskLogArchive } from './task-logs.js';
import { TaskVolumeError, taskVolumesOf } from './task-volumes.js';

export interface ExecutionsDeps {
  resources: {
    create<S>(row: NewResource<S>): Promise<ResourceRow<S>>;
    get<S>(
      workspace: string,
      kind: string,
      name: string,
      parent?: string,
    ): Promise<ResourceRow<S> | undefined>;
    deleteChildren(workspace: string, kind: string, parent: string): Promise<string[]>;
  };
  jobs: JobCatalogue;
  runner: Pick<
    JobRunner,
    'rows' | 'kick' | 'workspaceLoad' | 'capacityPerWorkspace' | 'activeExecutions' | 'settled'
  >;
  setup: Pick<TaskSetup, 'resolveImage'>;
  engine: Pick<TaskEngine, 'readLog' | 'ensureImage'>;
  sealer: Sealer;
  logs: TaskLogArchive;
  /** The engine's most memory for one container (MB). */
  maxMemoryMB: number;
  graceSeconds: number;
  /** An execution's timeout when its request names none (TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS). */
  executionTimeoutSeconds: number;
  now?: () => number;
}

export type Execution = JobExecution;

export class ExecutionsService {
  constructor(private readonly d: ExecutionsDeps) {}

  async create(
    workspace: string,
    jobName: string,
    req: CreateJobExecutionRequest,
    by: string,
  ): Promise<CreateJobExecutionOutput> {
    const job = await this.d.jobs.get(workspace, jobName);
    if (!job) throw notFound(`Job "${jobName}"`);
    const name = req.executionId ?? req.id ?? `exec-${randomUUID().slice(0, 18)}`;
    // Idempotency (reference §2.4 `id`): the same key answers the execution it made, nothing new.
    const existing = await this.row(workspace, jobName, name);
    if (existing) return output(existing);
    const runtime = job.spec.runtime;
    if (req.memory !== undefined && req.memory > runtime.memory) {
      throw invalidField('memory', `must not exceed the job's memory (${runtime.memory} MB)`);
    }
    const memoryMB = req.memory ?? runtime.memory;
    if (memoryMB > this.d.maxMemoryMB) {
      throw invalidField('memory', `must be at most ${this.d.maxMemoryMB} MB (this engine's capacity)`);
    }
    if (!runtime.image) throw invalidField('spec.runtime.image', `job "${jobName}" has no image to run`);
    const image = await this.d.setup.resolveImage(workspace, runtime.image);
    if (!image)
      throw invalidField('spec.runtime.image', `image "${runtime.image}" is not available in this workspace`);
    const imageSizeBytes = await this.d.engine.ensureImage(image).then(
      (info) => info.sizeBytes,
      () => undefined, // unknown size: image storage is not metered for it
    );
    const mounts = volumesOf(job.spec.volumes ?? []);
    const tasks = req.tasks.length > 0 ? req.tasks : [{}];
    if (!req.allowQueue) {
      // 429 and nothing created when no task could start now (reference §2.4 allowQueue).
      const load = await this.d.runner.workspaceLoad(workspace);
      if (load.live + load.waiting >= this.d.runner.capacityPerWorkspace) {
        throw new ApiError(
          'too_many_requests',
          `No capacity: ${load.live} tasks running and ${load.waiting} waiting in workspace "${workspace}" (capacity ${this.d.runner.capacityPerWorkspace}); retry later or allow queueing`,
        );
      }
    }
    const id = randomUUID();
    const env = { ...job.envs, ...req.env };
    const parallelism = req.parallelism ?? runtime.maxConcurrentTasks ?? DEFAULT_PARALLELISM;
    const executionTimeoutSeconds = req.timeout ?? this.d.executionTimeoutSeconds;
    const at = new Date((this.d.now ?? Date.now)()).toISOString();
    const runs: TaskRun[] = tasks.map(() => ({ phase: 'pending', attempts: 0 }));
    const system: ExecutionSystem = {
      tasks: tasks.map((_, i) => ({
        metadata: { name: taskName(i), createdAt: at, updatedAt: at },
        spec: { maxRetries: runtime.maxRetries, timeout: `${runtime.timeout}s` },
        status: 'pending',
        conditions: [],
      })),
      stats: { total: tasks.length, success: 0, failure: 0, running: 0, retried: 0, cancelled: 0 },
      runs,
      plan: {
        image,
        memoryMB,
        timeoutSeconds: runtime.timeout,
        maxRetries: runtime.maxRetries,
        envSealed: this.d.sealer.seal(JSON.stringify(env), id),
        graceSeconds: this.d.graceSeconds,
        ...(imageSizeBytes ? { imageSizeBytes } : {}),
        executionTimeoutSeconds,
        ...(mounts.volumes.length > 0 ? { volumes: mounts.volumes } : {}),
        ...(mounts.rootMB ? { rootDiskMB: mounts.rootMB } : {}),
      },
    };
    const spec: JobExecution['spec'] = {
      parallelism,
      tasks,
      timeout: executionTimeoutSeconds,
      // Values masked (reference §2.4 envOverride).
      ...(req.env ? { envOverride: Object.fromEntries(Object.keys(req.env).map((k) => [k, '***'])) } : {}),
      ...(req.memory !== undefined ? { memoryOverride: req.memory } : {}),
    };
    try {
      const row = await this.d.resources.create<JobExecution['spec']>({
        id,
        workspace,
        kind: JOB_EXECUTION_KIND,
        parent: jobName,
        name,
        displayName: null,
        externalId: null,
        labels: {},
        spec,
        status: 'queued',
        state: null,
        system,
        events: [],
        createdAt: at,
        updatedAt: at,
        createdBy: by,
        updatedBy: by,
        terminatedAt: null,
      });
      this.d.runner.kick();
      return output(row);
    } catch (err) {
      // The same key at the same moment: the other request made it.
      if (!(err instanceof UniqueViolationError)) throw err;
      const row = await this.row(workspace, jobName, name);
      if (!row) throw err;
      return output(row);
    }
  }

  /**
   * DELETE: `cancelling` now (none starts after this write: the runner's claim checks the status
   * under the same row lock); the runner cancels waiting tasks and stops running ones (SIGTERM +
   * grace), then `cancelled`.
   */
  async cancel(workspace: string, jobName: string, name: string): Promise<ExecutionRow> {
    const row = await this.mustRow(workspace, jobName, name);
    const written = await this.d.runner.rows.mutate(row.id, () => ({ status: 'cancelling' }));
    this.d.runner.kick();
    return written ?? row;
  }

  /**
   * Deleting a job (issue 17): every execution of it still active is cancelled and wound down,
   * its containers and volumes removed, before the job record goes. The job is DELETING meanwhile
   * (no new execution starts on it); a few rounds catch one created in between. `removeAll`
   * follows once the meter has charged them.
   */
  async cancelAll(workspace: string, jobName: string): Promise<void> {
    const bound = (this.d.graceSeconds + 60) * 1000;
    for (let round = 0; round < 5; round++) {
      const active = (await this.d.runner.activeExecutions()).filter(
        (r) => r.workspace === workspace && r.parent === jobName,
      );
      if (active.length === 0) break;
      for (const row of active) await this.cancelRow(row.id);
      await Promise.all(active.map((row) => this.d.runner.settled(row.id, bound)));
    }
  }

  /** Deleting a job: `cancelAll`, then `charged` (a metering pass sees their ends), then `removeAll`. */
  async retire(workspace: string, jobName: string, charged: () => Promise<unknown>): Promise<void> {
    await this.cancelAll(workspace, jobName);
    await charged();
    await this.removeAll(workspace, jobName);
  }

  /**
   * A deleted job's executions and their archived logs go with it, after `cancelAll` ended them
   * and a metering pass saw their ends: a job created again under the same name starts with no
   * history, and an old idempotency `id` makes a new execution instead of answering the deleted
   * job's.
   */
  async removeAll(workspace: string, jobName: string): Promise<void> {
    const removed = await this.d.resources.deleteChildren(workspace, JOB_EXECUTION_KIND, jobName);
    for (const id of removed) this.d.logs.remove(id);
  }

  /** Cancelling, with the waiting tasks cancelled in the same write (ends it when none runs). */
  private async cancelRow(id: string): Promise<ExecutionRow | undefined> {
    const written = await this.d.runner.rows.mutate(id, (_row, runs) => {
      for (const [i, r] of runs.entries()) {
        if (r.phase === 'pending') runs[i] = { ...r, phase: 'cancelled', outcome: 'cancelled' };
      }
      return { runs, status: 'cancelling' };
    });
    this.d.runner.kick();
    return written;
  }

  async tasks(
    workspace: string,
    jobName: string,
    name: string,
    page: PageRequest,
  ): Promise<PageResult<JobExecution['tasks'][number]>> {
    const row = await this.mustRow(workspace, jobName, name);
    const all = systemOf(row).tasks;
    const from = page.after ? Number(page.after.id) + 1 : 0;
    const items = all.slice(from, from + page.limit);
    const lastIndex = from + items.length - 1;
    return {
      items,
      hasMore: lastIndex < all.length - 1,
      total: all.length,
      ...(items.length > 0
        ? { last: { key: String(lastIndex).padStart(6, '0'), id: String(lastIndex) } }
        : {}),
    };
  }

  /** Finished attempts' output (archived), then the live attempt's, from `offset` of the whole. */
  async logs(
    workspace: string,
    jobName: string,
    name: string,
    task: string,
    offset: number,
  ): Promise<JobTaskLogs> {
    const row = await this.mustRow(workspace, jobName, name);
    const index = /^(?:task-)?(\d+)$/.exec(task)?.[1];
    const runs = systemOf(row).runs;
    const run = index === undefined ? undefined : runs[Number(index)];
    if (!run || index === undefined) throw notFound(`Task "${task}" of execution "${name}"`);
    let text = this.d.logs.read(row.id, Number(index));
    if (isLive(run) && run.engineId) {
      const live = await this.d.engine.readLog(run.engineId, 0, 1024 * 1024);
      text += `--- attempt ${run.attempts} ---\n${live.text}`;
    }
    const bytes = Buffer.from(text, 'utf8');
    const start = Math.min(offset, bytes.length);
    const terminal = ['succeeded', 'failed', 'cancelled', 'timeout'].includes(row.status ?? '');
    return {
      task: taskName(Number(index)),
      status: systemOf(row).tasks[Number(index)]?.status ?? 'pending',
      text: bytes.subarray(start, start + 1024 * 1024).toString('utf8'),
      next: Math.min(bytes.length, start + 1024 * 1024),
      done: terminal || ['succeeded', 'failed', 'cancelled'].includes(run.phase),
    };
  }

  private row(workspace: string, job: string, name: string): Promise<ExecutionRow | undefined> {
    return this.d.resources.get<JobExecution['spec']>(workspace, JOB_EXECUTION_KIND, name, job);
  }

  private async mustRow(workspace: string, job: string, name: string): Promise<ExecutionRow> {
    if (!(await this.d.jobs.get(workspace, job))) throw notFound(`Job "${job}"`);
    const row = await this.row(workspace, job, name);
    if (!row) throw notFound(`Execution "${name}" of job "${job}"`);
    return row;
  }
}

/** The job's volumes as tasks mount them; a job stored before paths were checked is 400 here. */
function volumesOf(volumes: JobRecordSpec['volumes']): ReturnType<typeof taskVolumesOf> {
  try {
    return taskVolumesOf(volumes);
  } catch (err) {
    if (err instanceof TaskVolumeError) throw invalidField(err.field, err.message);
    throw err;
  }
}

function output(row: ExecutionRow): CreateJobExecutionOutput {
  return {
    id: row.name,
    executionId: row.name,
    jobId: row.parent,
    workspaceId: row.workspace,
    tasks: row.spec.tasks,
  };
}
