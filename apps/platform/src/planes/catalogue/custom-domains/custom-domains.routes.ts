import { customDomainRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { CustomDomainsService } from './custom-domains.service.js';

export function registerCustomDomainRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  domains: CustomDomainsService,
): void {
  const r = customDomainRoutes;
  mountRoute(app, deps, r.list, async ({ ctx, page }) => domains.list(workspaceOf(ctx), page));
  mountRoute(app, deps, r.create, async ({ ctx, body }) =>
    domains.create(workspaceOf(ctx), principalOf(ctx).id, body),
  );
  mountRoute(app, deps, r.get, async ({ ctx, params }) => domains.get(workspaceOf(ctx), params.domainName));
  mountRoute(app, deps, r.update, async ({ ctx, params, body }) =>
    domains.update(workspaceOf(ctx), principalOf(ctx).id, params.domainName, body),
  );
  mountRoute(app, deps, r.delete, async ({ ctx, params }) =>
    domains.delete(workspaceOf(ctx), params.domainName),
  );
}
