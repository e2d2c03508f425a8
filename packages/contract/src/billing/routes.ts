import { defineRoute } from '../route.js';
import { accountIdParamSchema, accountMetricsQuerySchema, metricsWindowQuerySchema } from './query.js';
import { accountMetricsResponseSchema, groupByValuesSchema, resourceTypeValuesSchema } from './response.js';

/**
 * The billing metrics plane (spec "Billing metrics API"). `principal` routes: `workspace=` here is
 * a filter, not the workspace selector of workspace routes; the account must be the caller's.
 */
export const billingRoutes = {
  getAccountMetrics: defineRoute({
    operationId: 'getAccountMetrics',
    method: 'get',
    path: '/v0/accounts/{accountId}/metrics',
    summary: 'Cost and usage of the account over a window, bucketed and grouped',
    tag: 'billing',
    auth: 'principal',
    params: accountIdParamSchema,
    query: accountMetricsQuerySchema,
    response: accountMetricsResponseSchema,
    errors: [400, 403, 404],
  }),
  listMetricsGroupBy: defineRoute({
    operationId: 'listMetricsGroupByValues',
    method: 'get',
    path: '/v0/accounts/{accountId}/metrics/enums/group-by',
    summary: 'The groupBy dimensions (static)',
    tag: 'billing',
    auth: 'principal',
    params: accountIdParamSchema,
    response: groupByValuesSchema,
    errors: [404],
  }),
  listMetricsResourceTypes: defineRoute({
    operationId: 'listMetricsResourceTypes',
    method: 'get',
    path: '/v0/accounts/{accountId}/metrics/enums/resource-types',
    summary: 'Resource types with usage in the window',
    tag: 'billing',
    auth: 'principal',
    params: accountIdParamSchema,
    query: metricsWindowQuerySchema,
    response: resourceTypeValuesSchema,
    errors: [400, 404],
  }),
};
