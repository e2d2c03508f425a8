import { billingRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { BillingService } from './billing.service.js';

/** The billing metrics plane: parse (the runner), call the service, return its shape. */
export function registerBillingRoutes(app: Hono<ServerEnv>, deps: RouteDeps, billing: BillingService): void {
  const r = billingRoutes;
  mountRoute(app, deps, r.getAccountMetrics, async ({ ctx, params, query }) =>
    billing.metrics(principalOf(ctx), params.accountId, query),
  );
  mountRoute(app, deps, r.listMetricsGroupBy, async ({ ctx, params }) =>
    billing.groupByValues(principalOf(ctx), params.accountId),
  );
  mountRoute(app, deps, r.listMetricsResourceTypes, async ({ ctx, params, query }) =>
    billing.resourceTypes(principalOf(ctx), params.accountId, query),
  );
}
