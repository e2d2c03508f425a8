// No zod here: the SDK's error mapping imports only this table, so a bundle of the CLI's deploy
// path does not load zod or build any schema (apps/cli/scripts/bundle.mjs; issue 15 bench).

/**
 * The management plane's error vocabulary and its one table from code to HTTP status.
 * Servers throw these codes; the SDK maps them back to typed errors. (Spec "Errors"; the version
 * error body `{error: "invalid_api_version", message}` is the spec's own example of the shape.)
 */
export const managementErrorStatus = {
  validation_error: 400,
  invalid_api_version: 400,
  invalid_cursor: 400,
  cursor_expired: 400,
  cursor_mismatch: 400,
  workspace_required: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** A sandbox of that name exists (spec "Errors" 409); the body also carries the SDK's SandboxError fields. */
  sandbox_already_exists: 409,
  /** The sandbox image cannot be resolved (reference §0 SandboxError code INVALID_IMAGE). */
  invalid_image: 400,
  /** The thing existed but is no longer available, e.g. an expired pending image share (reference §1.9). */
  gone: 410,
  payload_too_large: 413,
  /** No capacity now and the caller asked not to queue (job executions, `allowQueue: false`). */
  too_many_requests: 429,
  unsupported_media_type: 415,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ManagementErrorCode = keyof typeof managementErrorStatus;
