import { functionRoutes, type FunctionSpec } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { listFilter } from '../../../framework/collection.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';

/**
 * Functions = MCP servers (reference §1.2). `spec.integrationConnections` must name connections
 * of the workspace (a 400 naming the missing one).
 */
export function functionService(deps: WorkloadDeps, runUrl: () => string) {
  return new WorkloadService<FunctionSpec>(deps, {
    kind: 'function',
    label: 'Function',
    runtimeWork: 'running MCP servers',
    policyResourceType: 'function',
    url: (workspace, name) => `${runUrl()}/${workspace}/functions/${name}`,
  });
}

export function registerFunctionRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  functions: WorkloadService<FunctionSpec>,
): void {
  const r = functionRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page, query }) =>
    functions.list(workspaceOf(ctx).name, page, listFilter(query)),
  );
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    functions.create(workspaceOf(ctx).name, principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params, query }) =>
    functions.get(workspaceOf(ctx), params.functionName, query.show_secrets ?? false),
  );
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    functions.update(workspaceOf(ctx).name, principalOf(ctx).id, params.functionName, body),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    functions.delete(workspaceOf(ctx).name, params.functionName),
  );
  mountRoute(app, deps, r.revisions, async ({ ctx, params }) =>
    functions.revisions(workspaceOf(ctx).name, params.functionName),
  );
}
