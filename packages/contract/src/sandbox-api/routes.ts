// The sandbox API's routes (reference sandbox-api.md; what sandboxd serves at {sandbox_url}) as
// data: the OpenAPI document of the sandbox API is generated from this table and the schemas
// beside it (../sandbox-api-openapi.ts, issue 14 item 9), and sandboxd's own test checks that the
// table and its router list the same routes, so neither drifts from the other.
// Each area's routes live in their own file; this table merges them in the order the OpenAPI
// document lists them.
import { sandboxErrorSchema } from './common.js';
import { filesystemRoutes } from './filesystem-routes.js';
import { mcpRoutes } from './mcp-routes.js';
import { multipartRoutes } from './multipart-routes.js';
import { networkRoutes } from './network-routes.js';
import { processRoutes } from './process-routes.js';
import type { SandboxRoute } from './route-spec.js';
import { systemRoutes } from './system-routes.js';
import { terminalRoutes } from './terminal-routes.js';

export type { SandboxResponseKind, SandboxRoute } from './route-spec.js';

export const sandboxApiError = sandboxErrorSchema;

export const sandboxApiRoutes: readonly SandboxRoute[] = [
  ...systemRoutes,
  ...filesystemRoutes,
  ...multipartRoutes,
  ...processRoutes,
  ...networkRoutes,
  ...mcpRoutes,
  ...terminalRoutes,
];
