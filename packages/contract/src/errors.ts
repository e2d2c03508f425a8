import { z } from 'zod';

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

export const fieldIssueSchema = z.object({
  field: z
    .string()
    .meta({ description: 'Dotted path of the offending field, e.g. `metadata.name` or `query.limit`.' }),
  message: z.string(),
});
export type FieldIssue = z.infer<typeof fieldIssueSchema>;

/** Body of every management error: `{error, code, message}` plus `details` on validation errors. */
export const managementErrorSchema = z
  .object({
    error: z.string().meta({ description: 'Machine-readable error code, e.g. `not_found`.' }),
    code: z
      .number()
      .int()
      .meta({ description: 'The HTTP status code, repeated for clients that read only the body.' }),
    message: z.string(),
    details: z.array(fieldIssueSchema).optional(),
  })
  .meta({ id: 'Error' });
export type ManagementErrorBody = z.infer<typeof managementErrorSchema>;

/** RFC 6749 §5.2 error body of the OAuth token endpoint (a plane with its own standard vocabulary). */
export const oauthErrorStatus = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
} as const;
export type OAuthErrorCode = keyof typeof oauthErrorStatus;
export const oauthErrorSchema = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ id: 'OAuthError' });
