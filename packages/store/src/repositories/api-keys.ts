import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import { keysetPage, type ListPage, type Page } from '../page.js';
import type { Database } from '../schema.js';
import { apiKeyFrom, type ApiKeyRow, type ApiKeyWithOwner } from './identity-rows.js';
import { principalWithAccess, workspaceAccessFrom, type WorkspaceAccessRow } from './workspace-access.js';

/** API keys, stored by id with only a hash of the secret. */
export function apiKeysRepository(db: Kysely<Database>) {
  return {
    async create(row: ApiKeyRow): Promise<ApiKeyRow> {
      await uniquely(() =>
        db
          .insertInto('api_keys')
          .values({
            id: row.id,
            principal_id: row.principalId,
            name: row.name,
            secret_hash: row.secretHash,
            expires_at: row.expiresAt,
            created_at: row.createdAt,
            updated_at: row.updatedAt,
          })
          .execute(),
      );
      return row;
    },

    /** The key and its owner's kind and account: authentication is this one indexed lookup. */
    async get(id: string): Promise<ApiKeyWithOwner | undefined> {
      const r = await db
        .selectFrom('api_keys as k')
        .innerJoin('principals as p', 'p.id', 'k.principal_id')
        .selectAll('k')
        .select(['p.kind', 'p.account_id'])
        .where('k.id', '=', id)
        .executeTakeFirst();
      return r && { ...apiKeyFrom(r), principalKind: r.kind, accountId: r.account_id };
    },

    /**
     * `get` plus the owner's access to one workspace, in one query (a request that names a
     * workspace then needs no second round trip on PostgreSQL). Revocation stays immediate: no key
     * row, no answer, whatever the workspace.
     */
    async getWithWorkspace(
      id: string,
      workspace: string,
    ): Promise<(ApiKeyWithOwner & { workspace: WorkspaceAccessRow | undefined }) | undefined> {
      const r = await principalWithAccess(db, workspace)
        .innerJoin('api_keys as k', 'k.principal_id', 'p.id')
        .selectAll('k')
        .select(['p.kind', 'p.account_id'])
        .where('k.id', '=', id)
        .executeTakeFirst();
      if (!r) return undefined;
      return {
        ...apiKeyFrom(r),
        principalKind: r.kind,
        accountId: r.account_id,
        workspace: workspaceAccessFrom(r),
      };
    },

    async listForPrincipal(principalId: string, page: ListPage): Promise<Page<ApiKeyRow>> {
      const query = db.selectFrom('api_keys').selectAll().where('principal_id', '=', principalId);
      const total = await query
        .clearSelect()
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow();
      return keysetPage(query, page, {
        columns: { createdAt: 'created_at', name: 'name', id: 'id' },
        search: ['name'],
        total: Number(total.n),
        map: apiKeyFrom,
      });
    },

    async delete(id: string, principalId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('api_keys')
        .where('id', '=', id)
        .where('principal_id', '=', principalId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
