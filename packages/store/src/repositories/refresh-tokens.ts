import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import type { Database } from '../schema.js';
import { refreshTokenFrom, type RefreshTokenRow } from './identity-rows.js';

/** OAuth refresh tokens; each is redeemable once (rotation). */
export function refreshTokensRepository(db: Kysely<Database>) {
  return {
    async create(row: RefreshTokenRow): Promise<RefreshTokenRow> {
      await uniquely(() =>
        db
          .insertInto('refresh_tokens')
          .values({
            id: row.id,
            principal_id: row.principalId,
            secret_hash: row.secretHash,
            expires_at: row.expiresAt,
            created_at: row.createdAt,
            revoked_at: row.revokedAt,
            replaced_by: row.replacedBy,
          })
          .execute(),
      );
      return row;
    },

    async get(id: string): Promise<RefreshTokenRow | undefined> {
      const r = await db.selectFrom('refresh_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return r && refreshTokenFrom(r);
    },

    /** Marks the token used. False when it already was: the one conditional update is the race guard. */
    async revoke(id: string, at: string): Promise<boolean> {
      const result = await db
        .updateTable('refresh_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async revokeAllForPrincipal(principalId: string, at: string): Promise<void> {
      await db
        .updateTable('refresh_tokens')
        .set({ revoked_at: at })
        .where('principal_id', '=', principalId)
        .where('revoked_at', 'is', null)
        .execute();
    },
  };
}
