import type { Kysely } from 'kysely';

/** The resource catalogue: one row per managed resource envelope. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('resources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace', 'text', (c) => c.notNull().references('workspaces.name').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('parent', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('external_id', 'text')
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('state', 'text')
    .addColumn('system', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('terminated_at', 'text')
    .addUniqueConstraint('resources_name', ['workspace', 'kind', 'parent', 'name'])
    .execute();
  // Keyset pagination by creation time and by name within one kind of one workspace.
  await db.schema
    .createIndex('resources_by_created')
    .on('resources')
    .columns(['workspace', 'kind', 'parent', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('resources_by_external_id')
    .on('resources')
    .columns(['workspace', 'kind', 'external_id'])
    .execute();
  // Controllers scan by kind across workspaces (reconcile after a restart, expiry, standby).
  await db.schema.createIndex('resources_by_kind').on('resources').columns(['kind', 'status']).execute();
}
