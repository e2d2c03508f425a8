import { BuildsApi } from './management/builds.js';
import { storageRoutes as s, supportRoutes, workloadRoutes } from '@tarmac/contract';
import { TarmacClient, type ClientOptions } from './client.js';
import { BillingApi } from './management/billing.js';
import { CrudApi } from './management/crud.js';
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
  readonly agents = new CrudApi(this, workloadRoutes.agents);
  readonly functions = new CrudApi(this, workloadRoutes.functions);
  readonly models = new CrudApi(this, workloadRoutes.models);
  readonly jobs = new CrudApi(this, workloadRoutes.jobs);
  readonly applications = new CrudApi(this, workloadRoutes.applications);
  readonly policies = new CrudApi(this, supportRoutes.policies);
  readonly integrationConnections = new CrudApi(this, supportRoutes.integrationConnections);
  readonly customDomains = new CrudApi(this, supportRoutes.customDomains);
  readonly volumes = new CrudApi(this, {
    list: s.listVolumes,
    create: s.createVolume,
    get: s.getVolume,
    update: s.updateVolume,
    delete: s.deleteVolume,
  });
  readonly drives = new CrudApi(this, {
    list: s.listDrives,
    create: s.createDrive,
    get: s.getDrive,
    update: s.updateDrive,
    delete: s.deleteDrive,
  });
  readonly billing = new BillingApi(this);
  /** Code upload and image builds (issue 15). */
  readonly builds = new BuildsApi(this);

  constructor(options: ClientOptions) {
    super(options);
  }

  override withWorkspace(workspace: string): Tarmac {
    return new Tarmac({ ...this.options, workspace });
  }
}
