import { buildOpenApiDocument, coreRoutes, type RouteSpec } from '@tarmac/contract';
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
  app.get('/docs', (c) => c.html(renderApiReference(openApi())));
}
