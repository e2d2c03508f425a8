/**
 * Workspace names appear as the first path segment of the run plane and job executions
 * (`/{workspace}/...`), so they may not collide with the platform's own first segments
 * (ARCHITECTURE.md "One binary, one data directory").
 */
export const RESERVED_WORKSPACE_NAMES = new Set([
  'v0',
  'v1',
  'oauth',
  'well-known',
  'console',
  'health',
  'ready',
  'api',
  'admin',
  'static',
  'assets',
  'docs',
  'metrics',
  'sandboxes',
  'preview',
  'run',
  'mcp',
  'default-account',
]);
