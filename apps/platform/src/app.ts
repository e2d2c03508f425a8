import { billingRoutes, coreRoutes, type RouteSpec } from '@tarmac/contract';
import { createManagementApp, CursorCodec, type RouteDeps } from '@tarmac/server-kit';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import {
  computeStorageRoutes,
  computeStorageServices,
  registerComputeStorageRoutes,
} from './resources/compute-storage.js';
import { DEFAULT_HOSTS, type HostConfig } from './resources/hosts.js';
import { SecretBox } from './resources/secrets.js';
import { driveTokenSigner } from './modules/drives/drive-token.js';
import { ChangeFeed } from './shared/change-feed.js';
import {
  registerWorkloadCatalogueRoutes,
  workloadCatalogueRoutes,
  workloadCatalogueServices,
} from './modules/workloads/catalogue.js';
import { MetricsQueryEngine } from './metering/query-engine.js';
import { DEFAULT_PRICES, type PriceTable } from './metering/prices.js';
import { AccountsService } from './modules/accounts/accounts.service.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { registerBillingRoutes } from './modules/billing/billing.routes.js';
import { BillingService } from './modules/billing/billing.service.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from './modules/identity/authenticator.js';
import { registerIdentityRoutes } from './modules/identity/identity.routes.js';
import { JwtService, type SigningKey } from './modules/identity/jwt.js';
import { OAuthService } from './modules/oauth/oauth.service.js';
import { registerOpsRoutes } from './modules/ops/ops.routes.js';
import { ServiceAccountsService } from './modules/service-accounts/service-accounts.service.js';
import { UsersService } from './modules/users/users.service.js';
import { WorkspacesService } from './modules/workspaces/workspaces.service.js';

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
  validateImage?: (ref: string) => Promise<boolean>;
  /** Most memory (MB) one sandbox can have: the engine's capacity (400 on spec.runtime.memory above). */
  maxSandboxMemoryMB?: number;
  /** USD per unit of each billing dimension (metering/prices.ts); defaults when absent. */
  prices?: PriceTable;
}

/** Every route the management plane serves, in OpenAPI order. */
export const managementRoutes: readonly RouteSpec[] = [
  ...Object.values(coreRoutes),
  ...Object.values(billingRoutes),
  ...computeStorageRoutes,
  ...workloadCatalogueRoutes,
];

/** Builds the platform's HTTP app from its dependencies. No I/O: main.ts opens everything. */
export function buildApp(deps: PlatformDeps) {
  const nowMs = deps.now ?? Date.now;
  const now = () => new Date(nowMs());
  const jwt = new JwtService(deps.signingKey, 'tarmac', nowMs);
  const routeDeps: RouteDeps = {
    authenticator: new BearerAuthenticator(deps.store, jwt, nowMs),
    workspaces: new MembershipWorkspaceResolver(deps.store),
    cursors: new CursorCodec(deps.cursorSecret, nowMs),
    checkResponses: deps.checkResponses ?? false,
  };
  const apiKeys = new ApiKeysService(deps.store, now);
  const app = createManagementApp({ logger: deps.logger });
  registerOpsRoutes(app, routeDeps, {
    ping: () => deps.store.ping(),
    routes: managementRoutes,
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
    ),
    accounts: new AccountsService(deps.store),
    workspaces: new WorkspacesService(deps.store, now),
    users: new UsersService(deps.store, apiKeys, now),
    serviceAccounts: new ServiceAccountsService(deps.store, now),
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
      feed: deps.changeFeed ?? new ChangeFeed(),
      now,
      secrets: new SecretBox(deps.secretKey ?? randomBytes(32)),
      hosts: { ...DEFAULT_HOSTS, ...deps.hosts },
      apiUrl: deps.apiUrl,
      signDriveToken: driveTokenSigner(deps.signingKey, 'tarmac', nowMs),
      ...(deps.validateImage ? { validateImage: deps.validateImage } : {}),
      ...(deps.maxSandboxMemoryMB !== undefined ? { maxSandboxMemoryMB: deps.maxSandboxMemoryMB } : {}),
    }),
  );
  registerWorkloadCatalogueRoutes(
    app,
    routeDeps,
    workloadCatalogueServices({
      store: deps.store,
      feed: deps.changeFeed ?? new ChangeFeed(),
      now,
      secrets: new SecretBox(deps.secretKey ?? randomBytes(32)),
      apiUrl: deps.apiUrl,
      hosts: { ...DEFAULT_HOSTS, ...deps.hosts },
      // The run plane shares the management listener for now (ARCHITECTURE.md "Addresses").
      runUrl: deps.apiUrl,
    }),
  );
  return app;
}
