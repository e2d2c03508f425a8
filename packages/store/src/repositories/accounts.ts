import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import type { Database } from '../schema.js';
import type { AccountRow } from './identity-rows.js';

/** Accounts own workspaces; account admins administer all of them. */
export function accountsRepository(db: Kysely<Database>) {
  return {
    async create(row: AccountRow): Promise<AccountRow> {
      await uniquely(() =>
        db.insertInto('accounts').values({ id: row.id, name: row.name, created_at: row.createdAt }).execute(),
      );
      return row;
    },

    async get(id: string): Promise<AccountRow | undefined> {
      const r = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return r && { id: r.id, name: r.name, createdAt: r.created_at };
    },

    async addAdmin(accountId: string, principalId: string): Promise<void> {
      await uniquely(() =>
        db
          .insertInto('account_admins')
          .values({ account_id: accountId, principal_id: principalId })
          .execute(),
      );
    },

    async isAdmin(accountId: string, principalId: string): Promise<boolean> {
      const r = await db
        .selectFrom('account_admins')
        .select('principal_id')
        .where('account_id', '=', accountId)
        .where('principal_id', '=', principalId)
        .executeTakeFirst();
      return r !== undefined;
    },

    /** The account a principal belongs to (one per principal), with whether it administers it. */
    async listForPrincipal(principalId: string): Promise<(AccountRow & { isAdmin: boolean })[]> {
      const rows = await db
        .selectFrom('principals as p')
        .innerJoin('accounts as a', 'a.id', 'p.account_id')
        .leftJoin('account_admins as aa', (join) =>
          join.onRef('aa.account_id', '=', 'a.id').onRef('aa.principal_id', '=', 'p.id'),
        )
        .select(['a.id', 'a.name', 'a.created_at', 'aa.principal_id as admin'])
        .where('p.id', '=', principalId)
        .execute();
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        createdAt: r.created_at,
        isAdmin: r.admin !== null,
      }));
    },
  };
}
