import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import { keysetPage, type ListPage, type Page } from '../page.js';
import type { Database } from '../schema.js';
import { workspaceFrom, type WorkspaceRow } from './identity-rows.js';

/** Workspaces; deleting one cascades to its memberships, invitations and resources. */
export function workspacesRepository(db: Kysely<Database>) {
  return {
    async create(row: WorkspaceRow): Promise<WorkspaceRow> {
      await uniquely(() =>
        db
          .insertInto('workspaces')
          .values({
            id: row.id,
            name: row.name,
            account_id: row.accountId,
            display_name: row.displayName,
            labels: JSON.stringify(row.labels),
            created_at: row.createdAt,
            updated_at: row.updatedAt,
            created_by: row.createdBy,
            updated_by: row.updatedBy,
          })
          .execute(),
      );
      return row;
    },

    async get(name: string): Promise<WorkspaceRow | undefined> {
      const r = await db.selectFrom('workspaces').selectAll().where('name', '=', name).executeTakeFirst();
      return r && workspaceFrom(r);
    },

    /** Up to `limit` workspace names of an account, by name: a cheap "is there exactly one?" for auth. */
    async namesOfAccount(accountId: string, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('workspaces')
        .select('name')
        .where('account_id', '=', accountId)
        .orderBy('name')
        .limit(limit)
        .execute();
      return rows.map((r) => r.name);
    },

    async update(
      name: string,
      patch: {
        displayName?: string | null;
        labels?: Record<string, string>;
        updatedBy: string;
        updatedAt: string;
      },
    ): Promise<WorkspaceRow | undefined> {
      await db
        .updateTable('workspaces')
        .set({
          ...(patch.displayName !== undefined ? { display_name: patch.displayName } : {}),
          ...(patch.labels !== undefined ? { labels: JSON.stringify(patch.labels) } : {}),
          updated_by: patch.updatedBy,
          updated_at: patch.updatedAt,
        })
        .where('name', '=', name)
        .execute();
      return this.get(name);
    },

    async delete(name: string): Promise<boolean> {
      const result = await db.deleteFrom('workspaces').where('name', '=', name).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Workspaces the principal is a member of, or administers as an account admin. */
    async listVisible(principalId: string, page: ListPage): Promise<Page<WorkspaceRow>> {
      const query = db
        .selectFrom('workspaces as w')
        .selectAll('w')
        .where((eb) =>
          eb.or([
            eb.exists(
              eb
                .selectFrom('memberships as m')
                .select('m.role')
                .whereRef('m.workspace', '=', 'w.name')
                .where('m.principal_id', '=', principalId),
            ),
            eb.exists(
              eb
                .selectFrom('account_admins as aa')
                .select('aa.principal_id')
                .whereRef('aa.account_id', '=', 'w.account_id')
                .where('aa.principal_id', '=', principalId),
            ),
          ]),
        );
      const total = await query
        .clearSelect()
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow();
      return keysetPage(query, page, {
        columns: { createdAt: 'w.created_at', name: 'w.name', id: 'w.id' },
        search: ['w.name', "coalesce(w.display_name, '')", 'w.labels'],
        total: Number(total.n),
        map: workspaceFrom,
      });
    },
  };
}
