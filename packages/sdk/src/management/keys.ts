import { coreRoutes as r, type RouteBodyInput, type RouteQueryInput } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

type ApiKeyBody = RouteBodyInput<typeof r.createOwnApiKey>;
type ListQuery = Partial<RouteQueryInput<typeof r.listOwnApiKeys>>;

/** The caller's own API keys (reference §1.14). */
export class ApiKeysApi {
  constructor(private readonly client: TarmacClient) {}
  list(query: ListQuery = {}) {
    return this.client.paginate(r.listOwnApiKeys, { query });
  }
  create(body: ApiKeyBody = {}) {
    return this.client.request(r.createOwnApiKey, { body });
  }
  delete(apiKeyId: string) {
    return this.client.request(r.deleteOwnApiKey, { params: { apiKeyId } });
  }
}

/** Service accounts of the workspace and their keys; `client_secret` is returned once. */
export class ServiceAccountsApi {
  constructor(private readonly client: TarmacClient) {}
  list(query: ListQuery = {}) {
    return this.client.paginate(r.listServiceAccounts, { query });
  }
  create(body: RouteBodyInput<typeof r.createServiceAccount>) {
    return this.client.request(r.createServiceAccount, { body });
  }
  update(clientId: string, body: RouteBodyInput<typeof r.updateServiceAccount>) {
    return this.client.request(r.updateServiceAccount, { params: { clientId }, body });
  }
  delete(clientId: string) {
    return this.client.request(r.deleteServiceAccount, { params: { clientId } });
  }
  listApiKeys(clientId: string, query: ListQuery = {}) {
    return this.client.paginate(r.listServiceAccountApiKeys, { params: { clientId }, query });
  }
  createApiKey(clientId: string, body: ApiKeyBody = {}) {
    return this.client.request(r.createServiceAccountApiKey, { params: { clientId }, body });
  }
  deleteApiKey(clientId: string, apiKeyId: string) {
    return this.client.request(r.deleteServiceAccountApiKey, { params: { clientId, apiKeyId } });
  }
}
