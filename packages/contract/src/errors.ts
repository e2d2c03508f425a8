import { z } from 'zod';

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
