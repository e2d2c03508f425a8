// @tarmac/sdk: the browser-safe entry (no node: imports). Node-only helpers — credentials.json,
// environment, `*.localhost` resolution, `ws` websockets — are in `@tarmac/sdk/node`.
export { Tarmac } from './tarmac.js';
export { TarmacClient, SDK_API_VERSION, type ClientOptions } from './client.js';
export {
  resolveSettings,
  type ConnectionSettings,
  type CredentialsFile,
  type ConfigSources,
} from './config.js';
export * from './http/errors.js';
export { PageIterator, toPage, type Page } from './http/pages.js';
export { DEFAULT_RETRY, isIdempotent, backoffDelay, type RetryPolicy } from './http/retry.js';
export type { FetchLike } from './http/transport.js';
export type { RouteInput } from './http/route-types.js';
export { WorkspacesApi, AccountsApi } from './management/workspaces.js';
export { UsersApi } from './management/users.js';
export { ApiKeysApi, ServiceAccountsApi } from './management/keys.js';
export { PlatformApi } from './management/platform.js';
export { CrudApi, type CrudTable } from './management/crud.js';
export { BillingApi } from './management/billing.js';
export { BuildsApi, type BuildKind, type OpenedUpload } from './management/builds.js';
export { Sandbox, type SandboxListQuery } from './sandbox/sandbox.js';
export { SandboxesApi } from './sandbox/sandboxes-api.js';
export { setDefaultClient, defaultClient } from './sandbox/default-client.js';
export {
  SandboxFilesystem,
  type FindOptions,
  type GrepOptions,
  type WatchHandle,
} from './sandbox/filesystem.js';
export {
  SandboxProcesses,
  type ExecOptions,
  type OutputCallbacks,
  type LogStream,
} from './sandbox/process.js';
export { SandboxPreviews, type PreviewCreateOptions } from './sandbox/previews.js';
export { SandboxSchedules } from './sandbox/schedules.js';
export { SandboxSnapshots, type ForkOptions } from './sandbox/snapshots.js';
export { SandboxSessions, type SandboxSession } from './sandbox/sessions.js';
export { SandboxTerminal, TerminalConnection, type TerminalOptions } from './sandbox/terminal.js';
export { MULTIPART_THRESHOLD, MULTIPART_PART_SIZE } from './sandbox/multipart.js';
export type { WebSocketFactory, WebSocketLike } from './sandbox/websocket.js';
export * from './sandbox/types.js';
