import {
  billingRoutes,
  buildLogRoutes,
  buildUploadRoutes,
  coreRoutes,
  imageImportRoutes,
  type RouteSpec,
} from '@tarmac/contract';
import { createManagementApp, CursorCodec, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import {
  computeStorageRoutes,
  computeStorageServices,
  registerComputeStorageRoutes,
  type ComputeStorageDeps,
} from './planes/sandbox/compute-storage.js';
import { DEFAULT_HOSTS, type HostConfig } from './framework/hosts.js';
import { driveTokenSigner } from './planes/identity/auth/drive-token.js';
import type { ChangeFeed } from './framework/change-feed.js';
import {
  registerWorkloadCatalogueRoutes,
  workloadCatalogueRoutes,
  workloadCatalogueServices,
} from './planes/catalogue/catalogue.js';
import { MetricsQueryEngine } from './planes/metering/query-engine.js';
import { DEFAULT_PRICES, type PriceTable } from './planes/metering/prices.js';
import { AccountsService } from './planes/identity/accounts/accounts.service.js';
import { ApiKeysService } from './planes/identity/api-keys/api-keys.service.js';
import { registerBillingRoutes } from './planes/metering/billing/billing.routes.js';
import { BillingService } from './planes/metering/billing/billing.service.js';
import { registerIdentityRoutes } from './planes/identity/identity.routes.js';
import type { SigningKey } from './planes/identity/auth/jwt.js';
import { OAuthService } from './planes/identity/oauth/oauth.service.js';
import { registerOpsRoutes } from './planes/ops/ops.routes.js';
import { ServiceAccountsService } from './planes/identity/service-accounts/service-accounts.service.js';
import { UsersService } from './planes/identity/users/users.service.js';
import { WorkspacesService } from './planes/identity/workspaces/workspaces.service.js';
import { sharedServices, type SharedServices } from './shared-services.js';
import { publishWorkspaceDeleted } from './framework/workspace-deletion.js';
import { revocationPublisher } from './framework/revocations.js';
import type { SandboxPool } from './planes/sandbox/pool/sandbox-pool.js';

export interface PlatformDeps {
  store: Store;
  logger: Logger;
  signingKey: SigningKey;
  cursorSecret: Uint8Array;
  /** Base URL clients use; a function because the bound port is known only after listening. */
  apiUrl: () => string;
  version: string;
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  /** Validate every response against the contract (tests). */
  checkResponses?: boolean;
  now?: () => number;
  /** 256-bit key sealing secret values at rest (`TARMAC_HOME/keys/secrets.key`); random if absent (tests). */
  secretKey?: Uint8Array;
  /** "Resource changed" notices to controllers; one per process, shared with the controllers. */
  changeFeed?: ChangeFeed;
  /** Domain, region, scheme and port of host-style sandbox and preview URLs. */
  hosts?: Partial<HostConfig>;
  /** Whether a sandbox image reference can be run (engine image store); accept-all when absent. */
  validateImage?: (ref: string, workspace: string) => Promise<boolean>;
  /** Most memory (MB) one sandbox can have: the engine's capacity (400 on spec.runtime.memory above). */
  maxSandboxMemoryMB?: number;
  /** The warm pool (planes/sandbox/pool/): creates it can serve get a pre-booted sandbox. */
  sandboxPool?: SandboxPool | undefined;
  /** Snapshot copies on the engine (the sandbox plane's runtime half); snapshots answer 503 without. */
  snapshotStorage?: ComputeStorageDeps['snapshotStorage'];
  /** The sandbox controller's notices about one sandbox (SandboxServiceDeps.watchSandbox). */
  watchSandbox?: ComputeStorageDeps['watchSandbox'];
  /** USD per unit of each billing dimension (planes/metering/prices.ts); defaults when absent. */
  prices?: PriceTable;
  /** Model `runtime.type`s the model gateway serves: their records are DEPLOYED (issue 18). */
  servedModelTypes?: ReadonlySet<string>;
  /** Before a job record goes: its executions cancelled and their containers gone (jobs plane). */
  beforeJobDelete?: (workspace: string, job: string) => Promise<void>;
  /** Days the model gateway's call records are kept (GET /v0/models/{name}/usage reports it). */
  modelCallRetentionDays?: number;
  /** Routes of planes compose.ts builds outside the app (the jobs plane's executions). */
  extraRoutes?: (app: ReturnType<typeof createManagementApp>, deps: RouteDeps) => void;
  /** Routes and middleware of planes wired by compose.ts (builds: `?upload=true`), mounted first. */
  earlyRoutes?: (app: Hono<ServerEnv>) => void;
}

/**
 * Management routes the node listener serves before the management app (raw bodies: POST
 * /v0/images/import, planes/sandbox/gateway/image-import.ts); documented with the rest (issue 14
 * item 8: the import was missing from the OpenAPI document).
 */
export const listenerRoutes: readonly RouteSpec[] = [
  ...Object.values(imageImportRoutes),
  // The upload URL's PUT (planes/builds/upload-route.ts): a streamed, capped archive.
  ...Object.values(buildUploadRoutes),
];

/**
 * Routes of the builds plane (issue 15), which compose.ts mounts through `earlyRoutes`: served by
 * the platform process, not by an app built without that plane (tests/e2e/builds prove them).
 */
export const buildPlaneRoutes: readonly RouteSpec[] = Object.values(buildLogRoutes);

/** Every route the management plane serves, in OpenAPI order. */
export const managementRoutes: readonly RouteSpec[] = [
  ...Object.values(coreRoutes),
  ...Object.values(billingRoutes),
  ...computeStorageRoutes,
  ...workloadCatalogueRoutes,
];

/**
 * Builds the platform's management HTTP app from its dependencies and the shared services (built
 * here when the caller has none: tests, benchmarks). No I/O: main.ts opens everything.
 */
export function buildApp(deps: PlatformDeps, shared: SharedServices = sharedServices(deps)) {
  const nowMs = deps.now ?? Date.now;
  const now = () => new Date(nowMs());
  const { jwt, changeFeed, secrets } = shared;
  const routeDeps: RouteDeps = {
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    cursors: new CursorCodec(deps.cursorSecret, nowMs),
    checkResponses: deps.checkResponses ?? false,
  };
  // Issue 19 items 8 and 10: revocations and workspace deletions reach the sandbox plane and the
  // controllers through the ChangeFeed (framework/revocations.ts).
  const revoked = revocationPublisher(changeFeed);
  const apiKeys = new ApiKeysService(deps.store, now, revoked);
  const app = createManagementApp({ logger: deps.logger });
  deps.earlyRoutes?.(app);
  registerOpsRoutes(app, routeDeps, {
    ping: () => deps.store.ping(),
    routes: [...managementRoutes, ...buildPlaneRoutes, ...listenerRoutes],
    version: deps.version,
    apiUrl: deps.apiUrl,
  });
  registerIdentityRoutes(app, routeDeps, {
    jwt,
    apiKeys,
    oauth: new OAuthService(
      deps.store,
      jwt,
      {
        accessTokenTtlSeconds: deps.accessTokenTtlSeconds ?? 900,
        refreshTokenTtlSeconds: deps.refreshTokenTtlSeconds ?? 30 * 86_400,
      },
      now,
      revoked,
    ),
    accounts: new AccountsService(deps.store),
    workspaces: new WorkspacesService(deps.store, now, (name) => publishWorkspaceDeleted(changeFeed, name)),
    users: new UsersService(deps.store, apiKeys, now, revoked),
    serviceAccounts: new ServiceAccountsService(deps.store, now, revoked),
  });
  registerBillingRoutes(
    app,
    routeDeps,
    new BillingService(
      deps.store,
      new MetricsQueryEngine(deps.store.metering, deps.prices ?? DEFAULT_PRICES),
      routeDeps.cursors,
    ),
  );
  registerComputeStorageRoutes(
    app,
    routeDeps,
    computeStorageServices({
      store: deps.store,
      feed: changeFeed,
      now,
      secrets,
      hosts: { ...DEFAULT_HOSTS, ...deps.hosts },
      apiUrl: deps.apiUrl,
      signDriveToken: driveTokenSigner(deps.signingKey, 'tarmac', nowMs),
      ...(deps.validateImage ? { validateImage: deps.validateImage } : {}),
      ...(deps.maxSandboxMemoryMB !== undefined ? { maxSandboxMemoryMB: deps.maxSandboxMemoryMB } : {}),
      ...(deps.sandboxPool ? { sandboxPool: deps.sandboxPool } : {}),
      ...(deps.snapshotStorage ? { snapshotStorage: deps.snapshotStorage } : {}),
      ...(deps.watchSandbox ? { watchSandbox: deps.watchSandbox } : {}),
    }),
  );
  registerWorkloadCatalogueRoutes(
    app,
    routeDeps,
    workloadCatalogueServices({
      store: deps.store,
      feed: changeFeed,
      now,
      secrets,
      apiUrl: deps.apiUrl,
      hosts: { ...DEFAULT_HOSTS, ...deps.hosts },
      // The run plane shares the management listener for now (ARCHITECTURE.md "Addresses").
      runUrl: deps.apiUrl,
      ...(deps.servedModelTypes ? { servedModelTypes: deps.servedModelTypes } : {}),
      ...(deps.beforeJobDelete ? { beforeJobDelete: deps.beforeJobDelete } : {}),
      ...(deps.modelCallRetentionDays !== undefined
        ? { modelCallRetentionDays: deps.modelCallRetentionDays }
        : {}),
    }),
  );
  deps.extraRoutes?.(app, routeDeps);
  return app;
}
