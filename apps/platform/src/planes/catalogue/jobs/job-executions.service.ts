import type { JobExecution } from '@tarmac/contract';
import { notFound, type PageRequest, type PageResult } from '@tarmac/server-kit';
import type { ResourceRow, Store } from '@tarmac/store';
import { mapPage } from '../../../framework/collection.js';
import { JOB_EXECUTION_KIND } from '../../../framework/kinds.js';
export { JOB_EXECUTION_KIND } from '../../../framework/kinds.js';

/**
 * Job executions (reference §1.4, §2.4), listed and fetched here. They are stored as resources of
 * kind `job-execution` whose parent is the job's name; the jobs runtime (a later issue) creates and
 * advances them. The row's spec holds the execution's `spec`, `system` its metadata extras, stats
 * and tasks, `status` its execution status.
 */

type StoredExecution = ResourceRow<JobExecution['spec']>;

export class JobExecutionsService {
  constructor(
    private readonly store: Store,
    private readonly jobExists: (workspace: string, job: string) => Promise<void>,
  ) {}

  async list(workspace: string, job: string, page: PageRequest): Promise<PageResult<JobExecution>> {
    await this.jobExists(workspace, job);
    const rows = await this.store.resources.list<JobExecution['spec']>(workspace, JOB_EXECUTION_KIND, page, {
      parent: job,
      includeTerminated: true,
    });
    return mapPage(rows, toExecution);
  }

  async get(workspace: string, job: string, id: string): Promise<JobExecution> {
    await this.jobExists(workspace, job);
    const row = await this.store.resources.get<JobExecution['spec']>(workspace, JOB_EXECUTION_KIND, id, job);
    if (!row) throw notFound(`Execution "${id}" of job "${job}"`);
    return toExecution(row);
  }
}

export function toExecution(row: StoredExecution): JobExecution {
  const system = row.system as Partial<Pick<JobExecution, 'stats' | 'tasks'>> &
    Partial<JobExecution['metadata']>;
  const tasks = system.tasks ?? [];
  return {
    metadata: {
      id: row.name,
      job: row.parent,
      workspace: row.workspace,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      ...(system.startedAt ? { startedAt: system.startedAt } : {}),
      ...(system.completedAt ? { completedAt: system.completedAt } : {}),
    },
    spec: row.spec,
    status: (row.status ?? 'queued') as JobExecution['status'],
    stats: system.stats ?? {
      total: tasks.length,
      success: 0,
      failure: 0,
      running: 0,
      retried: 0,
      cancelled: 0,
    },
    tasks,
  };
}
