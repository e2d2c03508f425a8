import { agentRoutes, type AgentSpec } from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { registerCrudRoutes } from '../../../framework/crud-routes.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';

/** Agents (spec "Agent"; reference §1.1): CRUD, revisions, show_secrets for workspace admins. */
export function agentService(deps: WorkloadDeps, runUrl: () => string) {
  return new WorkloadService<AgentSpec>(deps, {
    kind: 'agent',
    label: 'Agent',
    runtimeWork: 'running agents',
    policyResourceType: 'agent',
    url: (workspace, name) => `${runUrl()}/${workspace}/agents/${name}`,
    runPlane: true,
  });
}

export function registerAgentRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  agents: WorkloadService<AgentSpec>,
): void {
  registerCrudRoutes(app, deps, agentRoutes, agents, {
    nameParam: 'agentName',
    showSecrets: true,
    upsert: false,
  });
}
