import type { Kysely } from 'kysely';

/**
 * Lists filtered by `status` (reference §0: `status=DEPLOYED,FAILED`) walk this index in the
 * list's order instead of reading and discarding every row of other statuses (bench/api.ts: a
 * 5 % status page over 100,000 sandboxes read ~1,000 rows to keep 50).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('resources_by_status')
    .on('resources')
    .columns(['workspace', 'kind', 'parent', 'status', 'created_at', 'id'])
    .execute();
}
