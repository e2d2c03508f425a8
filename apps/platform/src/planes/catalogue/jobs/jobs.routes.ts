import { jobRoutes, type JobSpec } from '@tarmac/contract';
import { mountRoute, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { registerCrudRoutes } from '../../../framework/crud-routes.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';
import { JobExecutionsService } from './job-executions.service.js';

/** Jobs (reference §1.4): CRUD, revisions, show_secrets, and their executions (read side). */
export function jobServices(
  deps: WorkloadDeps,
  apiUrl: () => string,
  beforeDelete?: (workspace: string, job: string) => Promise<void>,
) {
  const jobs = new WorkloadService<JobSpec>(deps, {
    kind: 'job',
    label: 'Job',
    runtimeWork: 'running jobs',
    // Policies' resourceTypes has no `job` value (reference §2.3), so any policy may be attached.
    // Jobs are triggered on the base URL (spec "Inference endpoints": {base_url}/{ws}/jobs/{name}/executions).
    url: (workspace, name) => `${apiUrl()}/${workspace}/jobs/${name}`,
    // Deleting a job cancels its executions first (issue 17): nothing of it outlives the record.
    ...(beforeDelete ? { beforeDelete } : {}),
  });
  const executions = new JobExecutionsService(deps.store, async (workspace, job) => {
    await jobs.get({ name: workspace, accountId: '', role: 'member' }, job, false);
  });
  return { jobs, executions };
}
export type JobServices = ReturnType<typeof jobServices>;

export function registerJobRoutes(app: Hono<ServerEnv>, deps: RouteDeps, s: JobServices): void {
  const r = jobRoutes;
  registerCrudRoutes(app, deps, r, s.jobs, { nameParam: 'jobId', showSecrets: true, upsert: false });
  mountRoute(app, deps, r.listExecutions, async ({ ctx, params, page }) =>
    s.executions.list(workspaceOf(ctx).name, params.jobId, page),
  );
  mountRoute(app, deps, r.getExecution, async ({ ctx, params }) =>
    s.executions.get(workspaceOf(ctx).name, params.jobId, params.executionId),
  );
}
