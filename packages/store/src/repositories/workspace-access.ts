import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Role } from './identity-rows.js';

/**
 * A principal's access to one named workspace, read in the same statement as the principal (and its
 * API key): on PostgreSQL every round trip costs ~100 µs of this process's CPU, so authentication
 * that names a workspace is one query (issue "Platform core", bench/api-overhead.ts). Scalar
 * subqueries rather than left joins: measured cheaper per request.
 * `undefined` when the workspace does not exist; `memberRole` is the principal's membership,
 * `accountAdmin` whether it administers the workspace's account.
 */
export interface WorkspaceAccessRow {
  accountId: string;
  memberRole: Role | undefined;
  accountAdmin: boolean;
}

/** `principals as p` with the three access columns for `workspace` selected. */
export function principalWithAccess(db: Kysely<Database>, workspace: string) {
  return db
    .selectFrom('principals as p')
    .select((eb) => [
      eb
        .selectFrom('workspaces as w')
        .select('w.account_id')
        .where('w.name', '=', workspace)
        .as('workspace_account_id'),
      eb
        .selectFrom('memberships as m')
        .select('m.role')
        .where('m.workspace', '=', workspace)
        .whereRef('m.principal_id', '=', 'p.id')
        .as('member_role'),
      eb
        .selectFrom('account_admins as a')
        .innerJoin('workspaces as aw', 'aw.account_id', 'a.account_id')
        .select('a.principal_id')
        .where('aw.name', '=', workspace)
        .whereRef('a.principal_id', '=', 'p.id')
        .as('admin_id'),
    ]);
}

export function workspaceAccessFrom(r: {
  workspace_account_id: string | null;
  member_role: Role | null;
  admin_id: string | null;
}): WorkspaceAccessRow | undefined {
  if (r.workspace_account_id === null) return undefined;
  return {
    accountId: r.workspace_account_id,
    memberRole: r.member_role ?? undefined,
    accountAdmin: r.admin_id !== null,
  };
}
