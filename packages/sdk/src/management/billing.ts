import { billingRoutes as r, type RouteQueryInput } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';
import { TarmacConfigError } from '../http/errors.js';

/** Cost and usage of an account (spec "Billing metrics API"); the account defaults to the client's. */
export class BillingApi {
  constructor(private readonly client: TarmacClient) {}

  private account(accountId: string | undefined): string {
    const id = accountId ?? this.client.accountId;
    if (!id)
      throw new TarmacConfigError('no account id: pass one or set accountId (credentials.json has it)');
    return id;
  }
  metrics(query: RouteQueryInput<typeof r.getAccountMetrics>, accountId?: string) {
    return this.client.request(r.getAccountMetrics, {
      params: { accountId: this.account(accountId) },
      query,
    });
  }
  groupByValues(accountId?: string) {
    return this.client.request(r.listMetricsGroupBy, { params: { accountId: this.account(accountId) } });
  }
  resourceTypes(query: RouteQueryInput<typeof r.listMetricsResourceTypes>, accountId?: string) {
    return this.client.request(r.listMetricsResourceTypes, {
      params: { accountId: this.account(accountId) },
      query,
    });
  }
}
