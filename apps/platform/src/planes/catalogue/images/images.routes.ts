import { imageRoutes } from '@tarmac/contract';
import {
  Answer,
  mountRoute,
  principalOf,
  workspaceOf,
  type RouteDeps,
  type ServerEnv,
} from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { ImagesService } from './images.service.js';

export function registerImageRoutes(app: Hono<ServerEnv>, deps: RouteDeps, images: ImagesService): void {
  const r = imageRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page }) => images.list(workspaceOf(ctx).name, page));
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    images.register(workspaceOf(ctx).name, principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) =>
    images.get(workspaceOf(ctx).name, params.resourceType, params.imageName),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    images.delete(workspaceOf(ctx).name, params.resourceType, params.imageName),
  );
  mountRoute(app, deps, r.deleteTag, async ({ ctx, params }) =>
    images.deleteTag(
      workspaceOf(ctx).name,
      principalOf(ctx).id,
      params.resourceType,
      params.imageName,
      params.tagName,
    ),
  );
  mountRoute(app, deps, r.listShares, async ({ ctx, params }) =>
    images.shares(workspaceOf(ctx).name, params.resourceType, params.imageName),
  );
  mountRoute(app, deps, r.share, async ({ ctx, params, body }) => {
    const result = await images.share(
      workspaceOf(ctx),
      principalOf(ctx).id,
      params.resourceType,
      params.imageName,
      body,
    );
    return result.status === 200 ? result.image : new Answer(202, result.pending);
  });
  mountRoute(app, deps, r.unshare, async ({ ctx, params }) =>
    images.unshare(
      workspaceOf(ctx),
      principalOf(ctx).id,
      params.resourceType,
      params.imageName,
      params.targetWorkspace,
    ),
  );
  mountRoute(app, deps, r.listPendingShares, async ({ ctx, query }) =>
    images.pending.list(workspaceOf(ctx).name, query.direction),
  );
  mountRoute(app, deps, r.acceptPendingShare, async ({ ctx, params, query }) =>
    images.pending.accept(workspaceOf(ctx), principalOf(ctx).id, params.id, query.force),
  );
  mountRoute(app, deps, r.declinePendingShare, async ({ ctx, params }) =>
    images.pending.decline(workspaceOf(ctx), principalOf(ctx).id, params.id),
  );
}
