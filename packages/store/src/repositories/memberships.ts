import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { MembershipRow, Role } from './identity-rows.js';

/** Who belongs to which workspace, with which role. */
export function membershipsRepository(db: Kysely<Database>) {
  const base = () =>
    db
      .selectFrom('memberships as m')
      .innerJoin('workspaces as w', 'w.name', 'm.workspace')
      .select(['m.workspace', 'm.principal_id', 'm.role', 'w.account_id']);
  const from = (r: {
    workspace: string;
    principal_id: string;
    role: Role;
    account_id: string;
  }): MembershipRow => ({
    workspace: r.workspace,
    principalId: r.principal_id,
    role: r.role,
    accountId: r.account_id,
  });

  return {
    /** Adds the membership or changes its role (idempotent). */
    async upsert(workspace: string, principalId: string, role: Role): Promise<void> {
      await db
        .insertInto('memberships')
        .values({ workspace, principal_id: principalId, role })
        .onConflict((oc) => oc.columns(['workspace', 'principal_id']).doUpdateSet({ role }))
        .execute();
    },

    async get(workspace: string, principalId: string): Promise<MembershipRow | undefined> {
      const r = await base()
        .where('m.workspace', '=', workspace)
        .where('m.principal_id', '=', principalId)
        .executeTakeFirst();
      return r && from(r);
    },

    async listForPrincipal(principalId: string): Promise<MembershipRow[]> {
      const rows = await base().where('m.principal_id', '=', principalId).orderBy('m.workspace').execute();
      return rows.map(from);
    },

    async remove(workspace: string, principalId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('memberships')
        .where('workspace', '=', workspace)
        .where('principal_id', '=', principalId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async countAdmins(workspace: string): Promise<number> {
      const r = await db
        .selectFrom('memberships')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('workspace', '=', workspace)
        .where('role', '=', 'admin')
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
