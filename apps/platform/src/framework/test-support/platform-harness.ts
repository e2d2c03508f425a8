// In-process platform for HTTP tests of the catalogue: the real app (buildApp) over a real store
// (SQLite file or a fresh PostgreSQL schema), with three callers — the workspace admin, a member
// of the same workspace, and the admin of another workspace (scoping: their resources are 404s).
import type { TestDatabase } from '@tarmac/store/test-support';
import type { Store } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { buildApp, type PlatformDeps } from '../../app.js';
import { bootstrap } from '../../planes/identity/bootstrap.js';
import { ApiKeysService } from '../../planes/identity/api-keys/api-keys.service.js';
import { generateSigningJwk, signingKeyFromJwk } from '../../planes/identity/auth/jwt.js';
import { PREFIX, randomId } from '../credentials.js';
import { ChangeFeed, type ResourceRef } from '../change-feed.js';

export type Caller = 'admin' | 'member' | 'outsider';

export interface RequestOptions {
  as?: Caller;
  /** API version header; defaults to 2026-04-28 (paginated lists). */
  version?: string;
  headers?: Record<string, string>;
}

export interface TestPlatform {
  app: ReturnType<typeof buildApp>;
  store: Store;
  feed: ChangeFeed;
  /** Every notice published so far. */
  notices: ResourceRef[];
  workspace: string;
  otherWorkspace: string;
  secretKey: Uint8Array;
  /** Replaceable stand-ins for engine-backed dependencies (default: accept every image). */
  hooks: { validateImage: (ref: string) => Promise<boolean> };
  request(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<Response>;
  /** request() then JSON, with the status. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read loosely
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<{ status: number; body: T }>;
  dispose(): Promise<void>;
}

export async function openTestPlatform(
  database: TestDatabase,
  overrides: Partial<PlatformDeps> = {},
): Promise<TestPlatform> {
  const { store, dispose } = await database.open();
  const now = () => new Date();
  const admin = await bootstrap(store, { mintKey: true, now });
  const keys = new ApiKeysService(store, now);
  const at = now().toISOString();
  const member = await addUser(store, keys, admin.accountId, admin.workspace, 'member', at);
  const otherWorkspace = 'other';
  await store.workspaces.create({
    name: otherWorkspace,
    id: crypto.randomUUID(),
    accountId: admin.accountId,
    displayName: 'Other',
    labels: {},
    createdAt: at,
    updatedAt: at,
    createdBy: admin.adminId,
    updatedBy: admin.adminId,
  });
  const outsider = await addUser(store, keys, admin.accountId, otherWorkspace, 'admin', at);
  const feed = new ChangeFeed();
  const notices: ResourceRef[] = [];
  for (const kind of ['sandbox', 'preview', 'preview-token', 'volume', 'drive']) {
    feed.subscribe(kind, (ref) => notices.push(ref));
  }
  const secretKey = new Uint8Array(randomBytes(32));
  const hooks = { validateImage: async (_ref: string) => true };
  const app = buildApp({
    store,
    logger: pino({ level: 'silent' }),
    signingKey: await signingKeyFromJwk(await generateSigningJwk()),
    cursorSecret: new Uint8Array(randomBytes(32)),
    apiUrl: () => 'http://127.0.0.1:8080',
    version: 'test',
    checkResponses: true,
    secretKey,
    changeFeed: feed,
    validateImage: (ref) => hooks.validateImage(ref),
    ...overrides,
  });
  const apiKeys: Record<Caller, string> = { admin: admin.apiKey!, member, outsider };
  const request = (method: string, path: string, body?: unknown, options: RequestOptions = {}) =>
    Promise.resolve(
      app.request(path, {
        method,
        headers: {
          authorization: `Bearer ${apiKeys[options.as ?? 'admin']}`,
          'service-version': options.version ?? '2026-04-28',
          // The admin administers the account, so it sees both workspaces: name the one meant.
          'x-service-workspace': (options.as ?? 'admin') === 'outsider' ? otherWorkspace : admin.workspace,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
    );
  return {
    app,
    store,
    feed,
    notices,
    workspace: admin.workspace,
    otherWorkspace,
    secretKey,
    hooks,
    request,
    async call(method, path, body, options) {
      const response = await request(method, path, body, options);
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    dispose,
  };
}

async function addUser(
  store: Store,
  keys: ApiKeysService,
  accountId: string,
  workspace: string,
  role: 'admin' | 'member',
  at: string,
): Promise<string> {
  const id = randomId(PREFIX.user);
  await store.principals.create({
    id,
    kind: 'user',
    accountId,
    email: `${id}@example.test`,
    name: id,
    description: null,
    clientSecretHash: null,
    createdAt: at,
    updatedAt: at,
  });
  await store.memberships.upsert(workspace, id, role);
  return (await keys.create({ id, kind: 'user' }, { name: 'test' })).apiKey!;
}

/** Every resources row, in a stable order: compare before/after to prove a request changed nothing. */
export async function snapshotResources(store: Store): Promise<string> {
  const rows = await store.db.selectFrom('resources').selectAll().orderBy('id').execute();
  return JSON.stringify(rows);
}
