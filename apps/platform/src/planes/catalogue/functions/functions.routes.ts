import { functionRoutes, type FunctionSpec } from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { registerCrudRoutes } from '../../../framework/crud-routes.js';
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
    runPlane: true,
  });
}

export function registerFunctionRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  functions: WorkloadService<FunctionSpec>,
): void {
  registerCrudRoutes(app, deps, functionRoutes, functions, {
    nameParam: 'functionName',
    showSecrets: true,
    upsert: false,
  });
}
