import { computeRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { SandboxesService } from './sandboxes.service.js';

/** Sandbox routes (spec "Management API"): parse (the runner), call the service, return its shape. */
export function registerSandboxRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  sandboxes: SandboxesService,
): void {
  const r = computeRoutes;
  mountRoute(app, deps, r.listSandboxes, async ({ ctx, page, query }) =>
    sandboxes.list(workspaceOf(ctx), page, query),
  );
  mountRoute(app, deps, r.createSandbox, async ({ ctx, query, body }) =>
    sandboxes.create(workspaceOf(ctx), principalOf(ctx).id, body, query.createIfNotExist ?? false),
  );
  mountRoute(app, deps, r.getSandboxByExternalId, async ({ ctx, params }) =>
    sandboxes.getByExternalId(workspaceOf(ctx), params.externalId),
  );
  mountRoute(app, deps, r.getSandbox, async ({ ctx, params, query }) =>
    sandboxes.get(workspaceOf(ctx), params.sandboxName, query.show_secrets ?? false),
  );
  mountRoute(app, deps, r.updateSandbox, async ({ ctx, params, body }) =>
    sandboxes.update(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, body),
  );
  mountRoute(app, deps, r.deleteSandbox, async ({ ctx, params }) =>
    sandboxes.delete(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName),
  );
}
