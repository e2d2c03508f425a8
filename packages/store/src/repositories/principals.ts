import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import { keysetPage, type ListPage, type Page } from '../page.js';
import type { Database } from '../schema.js';
import { principalFrom, type PrincipalRow, type Role } from './identity-rows.js';
import { principalWithAccess, workspaceAccessFrom, type WorkspaceAccessRow } from './workspace-access.js';

/** Users and service accounts. Deleting one cascades to its keys, tokens and memberships. */
export function principalsRepository(db: Kysely<Database>) {
  async function listMembers(
    workspace: string,
    kind: PrincipalRow['kind'],
    page: ListPage,
  ): Promise<Page<PrincipalRow & { role: Role }>> {
    const query = db
      .selectFrom('principals as p')
      .innerJoin('memberships as m', 'm.principal_id', 'p.id')
      .selectAll('p')
      .select('m.role')
      .where('m.workspace', '=', workspace)
      .where('p.kind', '=', kind);
    const total = await query
      .clearSelect()
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return keysetPage(query, page, {
      columns: { createdAt: 'p.created_at', name: 'p.name', id: 'p.id' },
      search: ['p.name', "coalesce(p.email, '')"],
      total: Number(total.n),
      map: (r) => ({ ...principalFrom(r), role: r.role }),
    });
  }

  return {
    async create(row: PrincipalRow): Promise<PrincipalRow> {
      await uniquely(() =>
        db
          .insertInto('principals')
          .values({
            id: row.id,
            kind: row.kind,
            account_id: row.accountId,
            email: row.email,
            name: row.name,
            description: row.description,
            client_secret_hash: row.clientSecretHash,
            created_at: row.createdAt,
            updated_at: row.updatedAt,
          })
          .execute(),
      );
      return row;
    },

    async get(id: string): Promise<PrincipalRow | undefined> {
      const r = await db.selectFrom('principals').selectAll().where('id', '=', id).executeTakeFirst();
      return r && principalFrom(r);
    },

    /** `get` plus its access to one workspace, in one query (JWT authentication naming a workspace). */
    async getWithWorkspace(
      id: string,
      workspace: string,
    ): Promise<(PrincipalRow & { workspace: WorkspaceAccessRow | undefined }) | undefined> {
      const r = await principalWithAccess(db, workspace)
        .selectAll('p')
        .where('p.id', '=', id)
        .executeTakeFirst();
      return r && { ...principalFrom(r), workspace: workspaceAccessFrom(r) };
    },

    async getUserByEmail(email: string): Promise<PrincipalRow | undefined> {
      const r = await db
        .selectFrom('principals')
        .selectAll()
        .where('email', '=', email.toLowerCase())
        .where('kind', '=', 'user')
        .executeTakeFirst();
      return r && principalFrom(r);
    },

    async update(
      id: string,
      patch: { name?: string; description?: string | null; updatedAt: string },
    ): Promise<PrincipalRow | undefined> {
      await db
        .updateTable('principals')
        .set({
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          updated_at: patch.updatedAt,
        })
        .where('id', '=', id)
        .execute();
      return this.get(id);
    },

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('principals').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    listUsers: (workspace: string, page: ListPage) => listMembers(workspace, 'user', page),
    listServiceAccounts: (workspace: string, page: ListPage) =>
      listMembers(workspace, 'service_account', page),
  };
}
