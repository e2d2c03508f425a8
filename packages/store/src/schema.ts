// Table shapes as Kysely sees them. Timestamps are ISO 8601 UTC text in both dialects (fixed width,
// so they sort as they compare), JSON is text, so one repository module serves SQLite and PostgreSQL.
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface AccountAdminsTable {
  account_id: string;
  principal_id: string;
}

export interface PrincipalsTable {
  id: string;
  kind: 'user' | 'service_account';
  account_id: string;
  email: string | null;
  name: string;
  description: string | null;
  client_secret_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  account_id: string;
  display_name: string | null;
  labels: string;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
}

export interface MembershipsTable {
  workspace: string;
  principal_id: string;
  role: 'admin' | 'member';
}

export interface ApiKeysTable {
  id: string;
  principal_id: string;
  name: string;
  secret_hash: string;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RefreshTokensTable {
  id: string;
  principal_id: string;
  secret_hash: string;
  expires_at: string;
  created_at: string;
  revoked_at: string | null;
  replaced_by: string | null;
}

export interface InvitationsTable {
  id: string;
  workspace: string;
  email: string;
  role: string;
  invited_by: string;
  token_hash: string;
  expires_at: string;
  created_at: string;
  accepted_at: string | null;
}

/** Every managed resource of the catalogue: one row per envelope (ARCHITECTURE.md "Resources"). */
export interface ResourcesTable {
  id: string;
  workspace: string;
  kind: string;
  /** Owner within the workspace, e.g. the sandbox of a preview; '' for top-level resources. */
  parent: string;
  name: string;
  display_name: string | null;
  external_id: string | null;
  labels: string;
  spec: string;
  status: string | null;
  state: string | null;
  /** System-owned fields beyond status/state (JSON object), e.g. lastUsedAt, attachedTo. */
  system: string;
  events: string;
  revision: Generated<number>;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  /** Set when the resource is terminated; such rows are hidden from lists unless asked for. */
  terminated_at: string | null;
}

/** Rows per (workspace, kind, parent), kept by triggers (migration 003): `meta.total` of lists. */
export interface ResourceCountsTable {
  workspace: string;
  kind: string;
  parent: string;
  n: number;
}

export interface Database {
  accounts: AccountsTable;
  account_admins: AccountAdminsTable;
  principals: PrincipalsTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  refresh_tokens: RefreshTokensTable;
  invitations: InvitationsTable;
  resources: ResourcesTable;
  resource_counts: ResourceCountsTable;
}
