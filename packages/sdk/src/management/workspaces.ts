import { coreRoutes as r, type RouteBodyInput, type RouteQueryInput } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

type ListQuery = Partial<RouteQueryInput<typeof r.listWorkspaces>>;

/** Accounts and workspaces the caller can see (reference §1.13, §1.19). */
export class WorkspacesApi {
  constructor(private readonly client: TarmacClient) {}
  list(query: ListQuery = {}) {
    return this.client.paginate(r.listWorkspaces, { query });
  }
  get(name: string) {
    return this.client.request(r.getWorkspace, { params: { name } });
  }
  create(body: RouteBodyInput<typeof r.createWorkspace>) {
    return this.client.request(r.createWorkspace, { body });
  }
  update(name: string, body: RouteBodyInput<typeof r.updateWorkspace>) {
    return this.client.request(r.updateWorkspace, { params: { name }, body });
  }
  delete(name: string) {
    return this.client.request(r.deleteWorkspace, { params: { name } });
  }
}

export class AccountsApi {
  constructor(private readonly client: TarmacClient) {}
  list(query: ListQuery = {}) {
    return this.client.paginate(r.listAccounts, { query });
  }
}
