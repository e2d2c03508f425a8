import { storageRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { VolumesService } from './volumes.service.js';

/** Volume routes (spec "Volume"; reference §1.7). */
export function registerVolumeRoutes(app: Hono<ServerEnv>, deps: RouteDeps, volumes: VolumesService): void {
  const r = storageRoutes;
  mountRoute(app, deps, r.listVolumes, async ({ ctx, page, query }) =>
    volumes.list(workspaceOf(ctx), page, query),
  );
  mountRoute(app, deps, r.createVolume, async ({ ctx, body }) =>
    volumes.create(workspaceOf(ctx), principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.getVolumeByExternalId, async ({ ctx, params }) =>
    volumes.getByExternalId(workspaceOf(ctx), params.externalId),
  );
  mountRoute(app, deps, r.getVolume, async ({ ctx, params }) =>
    volumes.get(workspaceOf(ctx), params.volumeName),
  );
  mountRoute(app, deps, r.updateVolume, async ({ ctx, params, body }) =>
    volumes.update(workspaceOf(ctx), principalOf(ctx).id, params.volumeName, body),
  );
  mountRoute(app, deps, r.deleteVolume, async ({ ctx, params }) =>
    volumes.delete(workspaceOf(ctx), principalOf(ctx).id, params.volumeName),
  );
}
