import { buildOpenApiDocument, buildSandboxApiDocument, coreRoutes, type RouteSpec } from '@tarmac/contract';
import { ApiError, mountRoute, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { renderApiReference } from './api-reference-page.js';

export interface OpsDeps {
  /** Resolves when the store answers; rejects otherwise. */
  ping(): Promise<void>;
  routes: readonly RouteSpec[];
  version: string;
  apiUrl: () => string;
}

/** Liveness, readiness, the OpenAPI document (generated from the contract) and the reference page. */
export function registerOpsRoutes(app: Hono<ServerEnv>, deps: RouteDeps, ops: OpsDeps): void {
  mountRoute(app, deps, coreRoutes.health, async () => ({ status: 'ok' as const }));
  mountRoute(app, deps, coreRoutes.ready, async () => {
    try {
      await ops.ping();
    } catch {
      throw new ApiError('unavailable', 'The store does not answer');
    }
    return { status: 'ok' as const };
  });
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  const openApi = () =>
    (document ??= buildOpenApiDocument(ops.routes, {
      title: 'Tarmac API',
      version: ops.version,
      description:
        'Management API of the Tarmac platform. Generated from the zod contract in packages/contract.',
      serverUrl: ops.apiUrl(),
    }));
  app.get('/v0/openapi.json', (c) => c.json(openApi()));
  // The sandbox API (what sandboxd serves at {sandbox_url}; issue 14 item 9), from the same contract.
  let sandboxDocument: ReturnType<typeof buildSandboxApiDocument> | undefined;
  app.get('/v0/sandbox-openapi.json', (c) =>
    c.json(
      (sandboxDocument ??= buildSandboxApiDocument({
        title: 'Tarmac sandbox API',
        version: ops.version,
        description:
          'The API inside each sandbox (filesystem, processes, network, MCP, terminal), reached through the platform gateway. Generated from the zod contract in packages/contract.',
        runUrl: ops.apiUrl(),
      })),
    ),
  );
  app.get('/docs', (c) => c.html(renderApiReference(openApi())));
}
