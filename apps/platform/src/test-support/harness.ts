// In-process test harness: the real platform app (buildApp) over a real, fresh store, with the
// first-start identity (account, workspace `default`, admin API key) already bootstrapped. HTTP tests
// call `request(path, init)`, which goes through `app.request()` — no sockets. Vitest-free so any
// package's tests can use it.
import type { Store } from '@tarmac/store';
import { testDatabases, type TestDatabase } from '@tarmac/store/test-support';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { buildApp, type PlatformDeps } from '../app.js';
import { bootstrap } from '../planes/identity/bootstrap.js';
import { ApiKeysService } from '../planes/identity/api-keys/api-keys.service.js';
import { PREFIX, randomId } from '../framework/credentials.js';
import { testRunPlane } from './run-routes.js';
import { generateSigningJwk, signingKeyFromJwk, type SigningKey } from '../planes/identity/auth/jwt.js';
import { registerTestJobRoutes, testJobsPlane } from './job-routes.js';

export { testDatabases, type TestDatabase };

export interface TestRequestInit extends Omit<RequestInit, 'body' | 'headers'> {
  headers?: Record<string, string>;
  /** A plain value is sent as JSON (with `content-type: application/json`); a string as is. */
  body?: unknown;
  /** Bearer token; defaults to the admin key; `null` sends no credentials. */
  key?: string | null;
  /** `workspace` query parameter to append. */
  workspace?: string;
  /** `Service-Version` header. */
  version?: string;
}

export interface TestPlatform {
  app: ReturnType<typeof buildApp>;
  store: Store;
  /** The bootstrap admin's API key (`ak_…`), admin of account and workspace `default`. */
  adminKey: string;
  adminId: string;
  accountId: string;
  workspace: string;
  signingKey: SigningKey;
  /** Every log line the app wrote, parsed (pino JSON). */
  logs: Record<string, unknown>[];
  /** Calls the app in-process. Paths are relative to the server root (`/v0/...`). */
  request(path: string, init?: TestRequestInit): Promise<Response>;
  /** A new account with its own admin user, workspace and API key (isolation tests). */
  addAccount(input: { workspace: string; email?: string }): Promise<TestIdentity>;
  /** A new user of this platform's account, member of `workspace` with `role`, with an API key. */
  addUser(input: { workspace?: string; role?: 'admin' | 'member'; email?: string }): Promise<TestIdentity>;
  /** `request` then parse the JSON body; returns status and body. */
  json<T = unknown>(
    path: string,
    init?: TestRequestInit,
  ): Promise<{ status: number; body: T; headers: Headers }>;
}

export interface TestIdentity {
  userId: string;
  accountId: string;
  workspace: string;
  apiKey: string;
}

export interface TestPlatformOptions {
  store: Store;
  /** Clock in epoch ms (tests of expiry move it). */
  now?: () => number;
  /** Validate every response against the contract; on by default in tests. */
  checkResponses?: boolean;
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  signingKey?: SigningKey;
  cursorSecret?: Uint8Array;
  /** Wraps the deps before buildApp (e.g. to swap one dependency). */
  deps?: (deps: PlatformDeps) => PlatformDeps;
}

let sharedKey: Promise<SigningKey> | undefined;
/** One ES256 key for all test platforms of a process (generating one per test is wasted time). */
function testSigningKey(): Promise<SigningKey> {
  sharedKey ??= generateSigningJwk().then(signingKeyFromJwk);
  return sharedKey;
}

/** Builds the platform app over `store` (bootstrapped on first use) with captured logs. */
export async function createTestPlatform(options: TestPlatformOptions): Promise<TestPlatform> {
  const nowMs = options.now ?? Date.now;
  const logs: Record<string, unknown>[] = [];
  const logger: Logger = pino(
    { level: 'debug', base: { service: 'tarmac' } },
    {
      write(line: string) {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  const identity = await bootstrap(options.store, { mintKey: true, now: () => new Date(nowMs()) });
  const signingKey = options.signingKey ?? (await testSigningKey());
  const secretKey = new Uint8Array(randomBytes(32));
  const jobs = testJobsPlane(options.store, secretKey, logger);
  const run = testRunPlane(options.store, secretKey, signingKey, logger);
  let deps: PlatformDeps = {
    secretKey,
    beforeJobDelete: (workspace, job) => jobs.executions.retire(workspace, job, async () => undefined),
    extraRoutes: (app, routeDeps) => {
      registerTestJobRoutes(jobs)(app, routeDeps);
      run.register(app, routeDeps);
    },
    store: options.store,
    logger,
    signingKey,
    cursorSecret: options.cursorSecret ?? new Uint8Array(randomBytes(32)),
    apiUrl: () => 'http://tarmac.test',
    version: '0.0.0-test',
    checkResponses: options.checkResponses ?? true,
    now: nowMs,
    ...(options.accessTokenTtlSeconds ? { accessTokenTtlSeconds: options.accessTokenTtlSeconds } : {}),
    ...(options.refreshTokenTtlSeconds ? { refreshTokenTtlSeconds: options.refreshTokenTtlSeconds } : {}),
  };
  if (options.deps) deps = options.deps(deps);
  const app = buildApp(deps);
  const adminKey = identity.apiKey!;

  const request = (path: string, init: TestRequestInit = {}): Promise<Response> => {
    const { key, workspace, version, body, headers: given, ...rest } = init;
    const headers = new Headers(given);
    const token = key === undefined ? adminKey : key;
    if (token !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    if (version) headers.set('service-version', version);
    let payload: string | undefined;
    if (typeof body === 'string') payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    let url = path;
    if (workspace !== undefined)
      url += `${url.includes('?') ? '&' : '?'}workspace=${encodeURIComponent(workspace)}`;
    return Promise.resolve(
      app.request(`http://tarmac.test${url}`, {
        ...rest,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
      }),
    );
  };

  const store = options.store;
  const at = () => new Date(nowMs()).toISOString();
  const apiKeys = new ApiKeysService(store, () => new Date(nowMs()));
  const newUser = async (accountId: string, email: string) => {
    const id = randomId(PREFIX.user);
    await store.principals.create({
      id,
      kind: 'user',
      accountId,
      email,
      name: email.split('@')[0] ?? email,
      description: null,
      clientSecretHash: null,
      createdAt: at(),
      updatedAt: at(),
    });
    return id;
  };
  const keyFor = async (userId: string) =>
    (await apiKeys.create({ id: userId, kind: 'user' }, { name: 'test' })).apiKey!;

  return {
    app,
    store: options.store,
    async addAccount({ workspace, email }) {
      const accountId = randomId(PREFIX.account);
      await store.accounts.create({ id: accountId, name: workspace, createdAt: at() });
      const userId = await newUser(accountId, email ?? `${randomId('owner-')}@example.test`);
      await store.accounts.addAdmin(accountId, userId);
      await store.workspaces.create({
        name: workspace,
        id: crypto.randomUUID(),
        accountId,
        displayName: null,
        labels: {},
        createdAt: at(),
        updatedAt: at(),
        createdBy: userId,
        updatedBy: userId,
      });
      await store.memberships.upsert(workspace, userId, 'admin');
      return { userId, accountId, workspace, apiKey: await keyFor(userId) };
    },
    async addUser({ workspace = identity.workspace, role = 'member', email }) {
      const userId = await newUser(identity.accountId, email ?? `${randomId('user-')}@example.test`);
      await store.memberships.upsert(workspace, userId, role);
      return { userId, accountId: identity.accountId, workspace, apiKey: await keyFor(userId) };
    },
    adminKey,
    adminId: identity.adminId,
    accountId: identity.accountId,
    workspace: identity.workspace,
    signingKey,
    logs,
    request,
    async json<T>(path: string, init?: TestRequestInit) {
      const response = await request(path, init);
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: (text ? JSON.parse(text) : undefined) as T,
      };
    },
  };
}

/**
 * A test platform over a fresh database of `db` (SQLite file or PostgreSQL schema); `dispose`
 * drops it. Typical use: `describe.each(testDatabases(process.env))('$name', (db) => ...)`.
 */
export async function openTestPlatform(
  db: TestDatabase,
  options: Omit<TestPlatformOptions, 'store'> = {},
): Promise<TestPlatform & { dispose(): Promise<void> }> {
  const { store, dispose } = await db.open();
  try {
    return { ...(await createTestPlatform({ ...options, store })), dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
