import { storageRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { DrivesService } from './drives.service.js';

/** Drive routes (spec "Drive"; reference §1.8). */
export function registerDriveRoutes(app: Hono<ServerEnv>, deps: RouteDeps, drives: DrivesService): void {
  const r = storageRoutes;
  mountRoute(app, deps, r.listDrives, async ({ ctx, page, query }) =>
    drives.list(workspaceOf(ctx), page, query),
  );
  mountRoute(app, deps, r.createDrive, async ({ ctx, body }) =>
    drives.create(workspaceOf(ctx), principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.getDriveByExternalId, async ({ ctx, params }) =>
    drives.getByExternalId(workspaceOf(ctx), params.externalId),
  );
  mountRoute(app, deps, r.getDrive, async ({ ctx, params }) =>
    drives.get(workspaceOf(ctx), params.driveName),
  );
  mountRoute(app, deps, r.updateDrive, async ({ ctx, params, body }) =>
    drives.update(workspaceOf(ctx), principalOf(ctx).id, params.driveName, body),
  );
  mountRoute(app, deps, r.deleteDrive, async ({ ctx, params }) =>
    drives.delete(workspaceOf(ctx), principalOf(ctx).id, params.driveName),
  );
  mountRoute(app, deps, r.createDriveAccessToken, async ({ ctx, params }) =>
    drives.accessToken(workspaceOf(ctx), principalOf(ctx).id, params.driveName),
  );
}
