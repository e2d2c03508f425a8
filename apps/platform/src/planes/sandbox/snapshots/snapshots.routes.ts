import { snapshotRoutes as r } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { SnapshotsService } from './snapshots.service.js';

/** Snapshot and fork routes (reference control-plane §1.6 "Snapshots", "fork"). */
export function registerSnapshotRoutes(app: Hono<ServerEnv>, deps: RouteDeps, snapshots: SnapshotsService) {
  mountRoute(app, deps, r.listSnapshots, async ({ ctx, params }) =>
    snapshots.list(workspaceOf(ctx), params.sandboxName),
  );
  mountRoute(app, deps, r.createSnapshot, async ({ ctx, params, body }) =>
    snapshots.create(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, body ?? {}),
  );
  mountRoute(app, deps, r.createWorkspaceSnapshot, async ({ ctx, body }) =>
    snapshots.create(workspaceOf(ctx), principalOf(ctx).id, body.source.name, {
      ...(body.name ? { name: body.name } : {}),
    }),
  );
  mountRoute(app, deps, r.getSnapshot, async ({ ctx, params }) =>
    snapshots.get(workspaceOf(ctx), params.snapshotId),
  );
  mountRoute(app, deps, r.deleteSnapshot, async ({ ctx, params }) => {
    await snapshots.delete(workspaceOf(ctx), params.snapshotId);
    return null;
  });
  mountRoute(app, deps, r.deleteSandboxSnapshot, async ({ ctx, params }) => {
    await snapshots.delete(workspaceOf(ctx), params.snapshotId, params.sandboxName);
    return null;
  });
  mountRoute(app, deps, r.forkSandbox, async ({ ctx, params, body }) =>
    snapshots.fork(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, body),
  );
}
