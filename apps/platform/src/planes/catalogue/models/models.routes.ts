import { modelRoutes, type ModelSpec } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { listFilter } from '../../../framework/collection.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';

/** Model gateway endpoints (spec "Model gateway endpoint"; reference §1.3): `PUT` upserts. */
export function modelService(deps: WorkloadDeps, runUrl: () => string) {
  return new WorkloadService<ModelSpec>(deps, {
    kind: 'model',
    label: 'Model',
    runtimeWork: 'serving models through the gateway',
    policyResourceType: 'model',
    url: (workspace, name) => `${runUrl()}/${workspace}/models/${name}`,
  });
}

export function registerModelRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  models: WorkloadService<ModelSpec>,
): void {
  const r = modelRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page, query }) =>
    models.list(workspaceOf(ctx).name, page, listFilter(query)),
  );
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    models.create(workspaceOf(ctx).name, principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) =>
    models.get(workspaceOf(ctx), params.modelName, false),
  );
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    models.update(workspaceOf(ctx).name, principalOf(ctx).id, params.modelName, body, true),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    models.delete(workspaceOf(ctx).name, params.modelName),
  );
  mountRoute(app, deps, r.revisions, async ({ ctx, params }) =>
    models.revisions(workspaceOf(ctx).name, params.modelName),
  );
}
