import { modelRoutes, type ModelSpec } from '@tarmac/contract';
import { mountRoute, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { registerCrudRoutes } from '../../../framework/crud-routes.js';
import { WorkloadService, type WorkloadDeps } from '../workloads/workload.service.js';
import type { ModelUsageService } from './model-usage.js';

/** Model gateway endpoints (spec "Model gateway endpoint"; reference §1.3): `PUT` upserts. */
export function modelService(
  deps: WorkloadDeps,
  runUrl: () => string,
  /** `runtime.type`s the model gateway serves (issue 18): such records are DEPLOYED at once. */
  servedTypes: ReadonlySet<string> = new Set(),
) {
  return new WorkloadService<ModelSpec>(deps, {
    kind: 'model',
    label: 'Model',
    runtimeWork: 'serving models through the gateway',
    policyResourceType: 'model',
    url: (workspace, name) => `${runUrl()}/${workspace}/models/${name}`,
    servedAtOnce: (spec) => {
      const type = (spec as ModelSpec).runtime.type;
      return servedTypes.has(type) ? `Served by the model gateway (provider type ${type})` : undefined;
    },
  });
}

export function registerModelRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  models: WorkloadService<ModelSpec>,
  usage: ModelUsageService,
): void {
  registerCrudRoutes(app, deps, modelRoutes, models, {
    nameParam: 'modelName',
    showSecrets: false,
    upsert: true,
  });
  // Per-call usage through the model gateway (issue 18; model-usage.ts).
  mountRoute(app, deps, modelRoutes.usage, async ({ ctx, params, query }) =>
    usage.usage(workspaceOf(ctx), params.modelName, query),
  );
}
