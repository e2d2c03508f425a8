import { applicationRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { listFilter } from '../../../framework/collection.js';
import type { ApplicationsService } from './applications.service.js';

export function registerApplicationRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  apps: ApplicationsService,
): void {
  const r = applicationRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page }) => apps.list(workspaceOf(ctx), page, listFilter({})));
  mountRoute(app, deps, r.create, async ({ ctx, body, query }) =>
    apps.create(workspaceOf(ctx), principalOf(ctx).id, body, { upload: query.upload === 'true' }),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) => apps.get(workspaceOf(ctx), params.applicationName));
  mountRoute(app, deps, r.update, async ({ ctx, params, body, query }) =>
    apps.put(workspaceOf(ctx), principalOf(ctx).id, params.applicationName, body, {
      upload: query.upload === 'true',
    }),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    apps.delete(workspaceOf(ctx), params.applicationName),
  );
  mountRoute(app, deps, r.revisions, async ({ ctx, params }) =>
    apps.revisions(workspaceOf(ctx), params.applicationName),
  );
}
