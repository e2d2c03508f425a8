import { jobRoutes, type JobExecution } from '@tarmac/contract';
import { mountRoute, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { ExecutionRow } from './execution-rows.js';
import type { ExecutionsService } from './executions.service.js';

/** The routes of running jobs (issue 17): create (management and base URL), cancel, tasks, logs. */
export function registerJobRunRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  s: ExecutionsService,
  /** The catalogue's view of an execution row (planes/catalogue/jobs, handed in by compose.ts). */
  view: (row: ExecutionRow) => JobExecution,
): void {
  const r = jobRoutes;
  mountRoute(app, deps, r.createExecution, async ({ ctx, params, body }) =>
    s.create(workspaceOf(ctx).name, params.jobId, body, ctx.principal?.id ?? ''),
  );
  mountRoute(app, deps, r.triggerExecution, async ({ ctx, params, body }) =>
    s.create(workspaceOf(ctx).name, params.jobId, body, ctx.principal?.id ?? ''),
  );
  mountRoute(app, deps, r.cancelExecution, async ({ ctx, params }) =>
    view(await s.cancel(workspaceOf(ctx).name, params.jobId, params.executionId)),
  );
  mountRoute(app, deps, r.listExecutionTasks, async ({ ctx, params, page }) =>
    s.tasks(workspaceOf(ctx).name, params.jobId, params.executionId, page),
  );
  mountRoute(app, deps, r.taskLogs, async ({ ctx, params, query }) =>
    s.logs(workspaceOf(ctx).name, params.jobId, params.executionId, params.taskId, query.offset),
  );
}
