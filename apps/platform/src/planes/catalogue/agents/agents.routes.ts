import { agentRoutes, type AgentSpec } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { listFilter } from '../../../framework/collection.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';

/** Agents (spec "Agent"; reference §1.1): CRUD, revisions, show_secrets for workspace admins. */
export function agentService(deps: WorkloadDeps, runUrl: () => string) {
  return new WorkloadService<AgentSpec>(deps, {
    kind: 'agent',
    label: 'Agent',
    runtimeWork: 'running agents',
    policyResourceType: 'agent',
    url: (workspace, name) => `${runUrl()}/${workspace}/agents/${name}`,
  });
}

export function registerAgentRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  agents: WorkloadService<AgentSpec>,
): void {
  const r = agentRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page, query }) =>
    agents.list(workspaceOf(ctx).name, page, listFilter(query)),
  );
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    agents.create(workspaceOf(ctx).name, principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params, query }) =>
    agents.get(workspaceOf(ctx), params.agentName, query.show_secrets ?? false),
  );
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    agents.update(workspaceOf(ctx).name, principalOf(ctx).id, params.agentName, body),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    agents.delete(workspaceOf(ctx).name, params.agentName),
  );
  mountRoute(app, deps, r.revisions, async ({ ctx, params }) =>
    agents.revisions(workspaceOf(ctx).name, params.agentName),
  );
}
