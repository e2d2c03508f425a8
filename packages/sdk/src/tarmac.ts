import { TarmacClient, type ClientOptions } from './client.js';
import { ApiKeysApi, ServiceAccountsApi } from './management/keys.js';
import { PlatformApi } from './management/platform.js';
import { UsersApi } from './management/users.js';
import { AccountsApi, WorkspacesApi } from './management/workspaces.js';
import { SandboxesApi } from './sandbox/sandboxes-api.js';

/**
 * The SDK's entry object: the typed core (`request`, `paginate`) plus one wrapper per resource.
 *
 * ```ts
 * const tarmac = new Tarmac({ apiUrl: 'http://localhost:8080', apiKey, workspace: 'default' });
 * for await (const ws of tarmac.workspaces.list()) console.log(ws.name);
 * ```
 */
export class Tarmac extends TarmacClient {
  readonly platform = new PlatformApi(this);
  readonly accounts = new AccountsApi(this);
  readonly workspaces = new WorkspacesApi(this);
  readonly users = new UsersApi(this);
  readonly serviceAccounts = new ServiceAccountsApi(this);
  readonly apiKeys = new ApiKeysApi(this);
  readonly sandboxes = new SandboxesApi(this);

  constructor(options: ClientOptions) {
    super(options);
  }

  override withWorkspace(workspace: string): Tarmac {
    return new Tarmac({ ...this.options, workspace });
  }
}
