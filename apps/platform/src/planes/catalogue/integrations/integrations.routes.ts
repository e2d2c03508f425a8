import { integrationConnectionRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { ConnectionsService } from './connections.service.js';

export function registerIntegrationRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  connections: ConnectionsService,
): void {
  const r = integrationConnectionRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page }) => connections.list(workspaceOf(ctx), page));
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    connections.create(workspaceOf(ctx), principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) =>
    connections.get(workspaceOf(ctx), params.connectionName),
  );
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    connections.update(workspaceOf(ctx), principalOf(ctx).id, params.connectionName, body),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    connections.delete(workspaceOf(ctx), params.connectionName),
  );
}
