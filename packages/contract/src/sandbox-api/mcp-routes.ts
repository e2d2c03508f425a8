// The sandbox API's MCP endpoint (routes.ts).
import * as z from 'zod/mini';
import type { SandboxRoute } from './route-spec.js';

export const mcpRoutes: readonly SandboxRoute[] = [
  {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    summary:
      'MCP over streamable HTTP (stateless, JSON responses): process, filesystem and search tools; Host/Origin checked against DNS rebinding (403)',
    tag: 'mcp',
    body: z.record(z.string(), z.unknown()),
    response: z.record(z.string(), z.unknown()),
    errors: [403, 405],
  },
];
