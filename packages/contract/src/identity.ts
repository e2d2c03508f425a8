import { z } from 'zod';
import { displayNameSchema, durationSchema, labelsSchema, nameSchema, timestampSchema } from './common.js';

/** Shapes of accounts, workspaces, users, service accounts and API keys (reference §1.13-1.14). */

export const ROLES = ['admin', 'member'] as const;
export const roleSchema = z.enum(ROLES, { error: 'must be "admin" or "member"' });
export type Role = z.infer<typeof roleSchema>;

export const accountSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: timestampSchema,
    isAdmin: z.boolean().meta({ description: 'Whether the caller is an account admin.' }),
  })
  .meta({ id: 'Account' });
export type Account = z.infer<typeof accountSchema>;

export const workspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    displayName: z.string(),
    labels: z.record(z.string(), z.string()),
    accountId: z.string(),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
    createdBy: z.string(),
    updatedBy: z.string(),
    role: roleSchema.meta({ description: "The caller's role in this workspace." }),
  })
  .meta({ id: 'Workspace' });
export type Workspace = z.infer<typeof workspaceSchema>;

export const workspaceCreateSchema = z.strictObject({
  name: nameSchema,
  displayName: displayNameSchema.optional(),
  labels: labelsSchema.optional(),
});
/** `name` is immutable: it may be repeated in the body but not changed. */
export const workspaceUpdateSchema = z.strictObject({
  name: z.string().optional(),
  displayName: displayNameSchema.optional(),
  labels: labelsSchema.optional(),
});

export const workspaceUserSchema = z
  .object({
    sub: z.string().meta({ description: 'User id; empty for an invitation not yet accepted.' }),
    email: z.string(),
    email_verified: z.boolean(),
    given_name: z.string(),
    family_name: z.string(),
    role: roleSchema,
    accepted: z.boolean(),
    expired: z.boolean(),
    source: z.enum(['directory_sync', 'invitation', 'domain_capture']).meta({
      description: 'How the user joined (reference §1.13); this platform adds users by invitation.',
    }),
  })
  .meta({ id: 'WorkspaceUser' });
export type WorkspaceUser = z.infer<typeof workspaceUserSchema>;

export const emailSchema = z.email('must be an email address').max(254);
export const inviteUserSchema = z.strictObject({ email: emailSchema, role: roleSchema.default('member') });
export const updateUserSchema = z.strictObject({ role: roleSchema });

export const pendingInvitationSchema = z
  .object({
    email: z.string(),
    role: roleSchema,
    workspace: z.string(),
    invitedBy: z.string(),
    createdAt: timestampSchema,
    expiresAt: timestampSchema,
    accepted: z
      .boolean()
      .meta({ description: 'True when the email already belonged to a user, who was added at once.' }),
    invitationToken: z.string().optional().meta({
      description: 'Shown once: the invitee redeems it at `POST /v0/invitations/accept` for an API key.',
    }),
  })
  .meta({ id: 'PendingInvitation' });

export const acceptInvitationSchema = z.strictObject({
  token: z.string().min(1, 'must not be empty'),
  name: z.string().max(120).optional(),
});

export const serviceAccountSchema = z
  .object({
    client_id: z.string(),
    name: z.string(),
    description: z.string(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'ServiceAccount' });
export const serviceAccountWithSecretSchema = serviceAccountSchema
  .extend({ client_secret: z.string().meta({ description: 'Shown once.' }) })
  .meta({ id: 'ServiceAccountWithSecret' });
export const serviceAccountCreateSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(120),
  description: z.string().max(1000).optional(),
  role: roleSchema.default('member').meta({ description: 'Role in the workspace; defaults to member.' }),
});
export const serviceAccountUpdateSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(120).optional(),
  description: z.string().max(1000).optional(),
});

/** API keys: random, shown once, stored hashed, with a visible id prefix (`ak_…`). */
export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    expires_in: z.string().nullable(),
    expiresAt: timestampSchema.nullable(),
    sub: z.string(),
    sub_type: z.enum(['user', 'service_account']),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
    apiKey: z.string().optional().meta({ description: 'The key itself: returned once, at creation.' }),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof apiKeySchema>;
export const apiKeyCreateSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(120).default('default'),
  expires_in: durationSchema
    .optional()
    .meta({ description: 'e.g. 30d, 24h, 1w; at most 10y; absent = never.' }),
});

export const invitationAcceptedSchema = z
  .object({
    sub: z.string(),
    email: z.string(),
    workspace: z.string(),
    role: roleSchema,
    apiKey: apiKeySchema,
  })
  .meta({ id: 'InvitationAccepted' });

/** POST /oauth/token (RFC 6749 §4.4 client credentials and §6 refresh). */
export const tokenRequestSchema = z.object({
  grant_type: z.enum(['client_credentials', 'refresh_token'], {
    error: 'must be "client_credentials" or "refresh_token"',
  }),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
});
export const tokenResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string(),
    scope: z.string().optional(),
  })
  .meta({ id: 'TokenResponse' });

export const jwksSchema = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())) })
  .meta({ id: 'JSONWebKeySet' });
