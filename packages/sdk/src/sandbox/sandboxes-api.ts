import type { TarmacClient } from '../client.js';
import { Sandbox, type SandboxListQuery } from './sandbox.js';
import type { SandboxCreateOptions } from './types.js';

/** `tarmac.sandboxes`: the `Sandbox` statics bound to one client. */
export class SandboxesApi {
  constructor(private readonly client: TarmacClient) {}
  create(options: SandboxCreateOptions = {}) {
    return Sandbox.create(options, this.client);
  }
  createIfNotExists(options: SandboxCreateOptions & { name: string }) {
    return Sandbox.createIfNotExists(options, this.client);
  }
  get(name: string) {
    return Sandbox.get(name, this.client);
  }
  getByExternalId(externalId: string) {
    return Sandbox.getByExternalId(externalId, this.client);
  }
  list(query: SandboxListQuery = {}) {
    return Sandbox.list(query, this.client);
  }
  delete(name: string) {
    return Sandbox.delete(name, this.client);
  }
}
