// Rows as the platform sees them (camelCase, JSON decoded), and the mappers from table rows.
import type {
  ApiKeysTable,
  InvitationsTable,
  PrincipalsTable,
  RefreshTokensTable,
  WorkspacesTable,
} from '../schema.js';

export type Role = 'admin' | 'member';
export type PrincipalKind = 'user' | 'service_account';

export interface AccountRow {
  id: string;
  name: string;
  createdAt: string;
}

export interface PrincipalRow {
  id: string;
  kind: PrincipalKind;
  accountId: string;
  email: string | null;
  name: string;
  description: string | null;
  clientSecretHash: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WorkspaceRow {
  id: string;
  name: string;
  accountId: string;
  displayName: string | null;
  labels: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
}

export interface MembershipRow {
  workspace: string;
  principalId: string;
  accountId: string;
  role: Role;
}

export interface ApiKeyRow {
  id: string;
  principalId: string;
  name: string;
  secretHash: string;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An API key joined with its owner: what authentication needs in one lookup. */
export interface ApiKeyWithOwner extends ApiKeyRow {
  principalKind: PrincipalKind;
  accountId: string;
}

export interface RefreshTokenRow {
  id: string;
  principalId: string;
  secretHash: string;
  expiresAt: string;
  createdAt: string;
  revokedAt: string | null;
  replacedBy: string | null;
}

export interface InvitationRow {
  id: string;
  workspace: string;
  email: string;
  role: string;
  invitedBy: string;
  tokenHash: string;
  expiresAt: string;
  createdAt: string;
  acceptedAt: string | null;
}

export const principalFrom = (r: PrincipalsTable): PrincipalRow => ({
  id: r.id,
  kind: r.kind,
  accountId: r.account_id,
  email: r.email,
  name: r.name,
  description: r.description,
  clientSecretHash: r.client_secret_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const workspaceFrom = (r: WorkspacesTable): WorkspaceRow => ({
  id: r.id,
  name: r.name,
  accountId: r.account_id,
  displayName: r.display_name,
  labels: JSON.parse(r.labels) as Record<string, string>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
});

export const apiKeyFrom = (r: ApiKeysTable): ApiKeyRow => ({
  id: r.id,
  principalId: r.principal_id,
  name: r.name,
  secretHash: r.secret_hash,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const refreshTokenFrom = (r: RefreshTokensTable): RefreshTokenRow => ({
  id: r.id,
  principalId: r.principal_id,
  secretHash: r.secret_hash,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  replacedBy: r.replaced_by,
});

export const invitationFrom = (r: InvitationsTable): InvitationRow => ({
  id: r.id,
  workspace: r.workspace,
  email: r.email,
  role: r.role,
  invitedBy: r.invited_by,
  tokenHash: r.token_hash,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  acceptedAt: r.accepted_at,
});
