import type { Kysely } from 'kysely';
import { uniquely } from '../errors.js';
import type { Database } from '../schema.js';
import { invitationFrom, type InvitationRow } from './identity-rows.js';

/** Pending invitations to a workspace, redeemed by a one-time token stored hashed. */
export function invitationsRepository(db: Kysely<Database>) {
  return {
    async create(row: InvitationRow): Promise<InvitationRow> {
      await uniquely(() =>
        db
          .insertInto('invitations')
          .values({
            id: row.id,
            workspace: row.workspace,
            email: row.email,
            role: row.role,
            invited_by: row.invitedBy,
            token_hash: row.tokenHash,
            expires_at: row.expiresAt,
            created_at: row.createdAt,
            accepted_at: row.acceptedAt,
          })
          .execute(),
      );
      return row;
    },

    async getByTokenHash(tokenHash: string): Promise<InvitationRow | undefined> {
      const r = await db
        .selectFrom('invitations')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst();
      return r && invitationFrom(r);
    },

    async listPending(workspace: string, now: string): Promise<InvitationRow[]> {
      const rows = await db
        .selectFrom('invitations')
        .selectAll()
        .where('workspace', '=', workspace)
        .where('accepted_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy('created_at')
        .execute();
      return rows.map(invitationFrom);
    },

    /** Every invitation not yet accepted, expired ones included (the users list shows them as expired). */
    async listUnaccepted(workspace: string): Promise<InvitationRow[]> {
      const rows = await db
        .selectFrom('invitations')
        .selectAll()
        .where('workspace', '=', workspace)
        .where('accepted_at', 'is', null)
        .orderBy('created_at')
        .execute();
      return rows.map(invitationFrom);
    },

    async deleteForEmail(workspace: string, email: string): Promise<void> {
      await db
        .deleteFrom('invitations')
        .where('workspace', '=', workspace)
        .where('email', '=', email)
        .where('accepted_at', 'is', null)
        .execute();
    },

    async markAccepted(id: string, at: string): Promise<void> {
      await db.updateTable('invitations').set({ accepted_at: at }).where('id', '=', id).execute();
    },
  };
}
