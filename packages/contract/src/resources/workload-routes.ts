import type { RouteSpec } from '../route.js';
import { agentRoutes } from './agent.js';
import { applicationRoutes } from './application.js';
import { customDomainRoutes } from './custom-domain.js';
import { functionRoutes } from './function.js';
import { imageRoutes } from './image.js';
import { integrationConnectionRoutes } from './integration.js';
import { jobRoutes } from './job.js';
import { modelRoutes } from './model.js';
import { policyRoutes } from './policy.js';
import { templateRoutes } from './template.js';

/** Route tables of the workload kinds (issue 3 part B), in OpenAPI order. */
export const workloadRoutes = {
  agents: agentRoutes,
  functions: functionRoutes,
  models: modelRoutes,
  jobs: jobRoutes,
  applications: applicationRoutes,
} as const;

/** Route tables of the supporting kinds: images, templates, connections, policies, custom domains. */
export const supportRoutes = {
  images: imageRoutes,
  templates: templateRoutes,
  integrationConnections: integrationConnectionRoutes,
  policies: policyRoutes,
  customDomains: customDomainRoutes,
} as const;

/** Every route of the two tables, flattened (the management plane's route list and OpenAPI). */
export const workloadAndSupportRouteList: readonly RouteSpec[] = [
  ...Object.values(workloadRoutes),
  ...Object.values(supportRoutes),
].flatMap((table) => Object.values(table) as RouteSpec[]);
