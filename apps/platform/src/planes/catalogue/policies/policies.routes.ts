import { policyRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { PoliciesService } from './policies.service.js';

export function registerPolicyRoutes(app: Hono<ServerEnv>, deps: RouteDeps, policies: PoliciesService): void {
  const r = policyRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page }) => policies.list(workspaceOf(ctx), page));
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    policies.create(workspaceOf(ctx), principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) => policies.get(workspaceOf(ctx), params.policyName));
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    policies.update(workspaceOf(ctx), principalOf(ctx).id, params.policyName, body),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    policies.delete(workspaceOf(ctx), params.policyName),
  );
  mountRoute(app, deps, r.usages, async ({ ctx, params }) =>
    policies.usages(workspaceOf(ctx), params.policyName),
  );
}
