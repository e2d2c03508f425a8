import { workloadAndSupportRouteList, type RouteSpec } from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { CollectionDeps } from '../../framework/collection.js';
import { agentService, registerAgentRoutes } from './agents/agents.routes.js';
import { ApplicationsService } from './applications/applications.service.js';
import { registerApplicationRoutes } from './applications/applications.routes.js';
import { CustomDomainsService } from './custom-domains/custom-domains.service.js';
import { registerCustomDomainRoutes } from './custom-domains/custom-domains.routes.js';
import { functionService, registerFunctionRoutes } from './functions/functions.routes.js';
import { ImagesService } from './images/images.service.js';
import { registerImageRoutes } from './images/images.routes.js';
import { ConnectionsService } from './integrations/connections.service.js';
import { registerIntegrationRoutes } from './integrations/integrations.routes.js';
import { jobServices, registerJobRoutes } from './jobs/jobs.routes.js';
import { ModelUsageService } from './models/model-usage.js';
import { modelService, registerModelRoutes } from './models/models.routes.js';
import { PoliciesService } from './policies/policies.service.js';
import { registerPolicyRoutes } from './policies/policies.routes.js';
import { registerTemplateRoutes } from './templates/templates.routes.js';

/** Days the model gateway's call records are kept unless TARMAC_MODEL_CALL_RETENTION_DAYS says. */
export const DEFAULT_MODEL_CALL_RETENTION_DAYS = 30;

/** Routes of the workload and supporting kinds (issue 3 part B), in OpenAPI order. */
export const workloadCatalogueRoutes: readonly RouteSpec[] = workloadAndSupportRouteList;

export interface WorkloadCatalogueDeps extends CollectionDeps {
  /** Inference base URL (`{run_url}`); workloads' `metadata.url` lives there. */
  runUrl: () => string;
  /** Model `runtime.type`s the model gateway serves (compose.ts hands them in; issue 18). */
  servedModelTypes?: ReadonlySet<string>;
  /** Before a job record goes (the jobs plane cancels its executions; issue 17). */
  beforeJobDelete?: (workspace: string, job: string) => Promise<void>;
  /** How long the model gateway's call records are kept (TARMAC_MODEL_CALL_RETENTION_DAYS; 30). */
  modelCallRetentionDays?: number;
}

export function workloadCatalogueServices(deps: WorkloadCatalogueDeps) {
  const models = modelService(deps, deps.runUrl, deps.servedModelTypes);
  return {
    agents: agentService(deps, deps.runUrl),
    functions: functionService(deps, deps.runUrl),
    models,
    modelUsage: new ModelUsageService({
      store: deps.store,
      models,
      retentionDays: deps.modelCallRetentionDays ?? DEFAULT_MODEL_CALL_RETENTION_DAYS,
    }),
    jobs: jobServices(deps, deps.apiUrl, deps.beforeJobDelete),
    applications: new ApplicationsService(deps, deps.runUrl),
    images: new ImagesService(deps),
    connections: new ConnectionsService(deps, deps.apiUrl),
    policies: new PoliciesService(deps, deps.apiUrl),
    customDomains: new CustomDomainsService(deps, deps.apiUrl, () => `preview.${deps.hosts.domain}`),
  };
}
export type WorkloadCatalogueServices = ReturnType<typeof workloadCatalogueServices>;

export function registerWorkloadCatalogueRoutes(
  app: Hono<ServerEnv>,
  routeDeps: RouteDeps,
  s: WorkloadCatalogueServices,
): void {
  registerAgentRoutes(app, routeDeps, s.agents);
  registerFunctionRoutes(app, routeDeps, s.functions);
  registerModelRoutes(app, routeDeps, s.models, s.modelUsage);
  registerJobRoutes(app, routeDeps, s.jobs);
  registerApplicationRoutes(app, routeDeps, s.applications);
  registerImageRoutes(app, routeDeps, s.images);
  registerTemplateRoutes(app, routeDeps);
  registerIntegrationRoutes(app, routeDeps, s.connections);
  registerPolicyRoutes(app, routeDeps, s.policies);
  registerCustomDomainRoutes(app, routeDeps, s.customDomains);
}
