import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * Metering (apps/platform/src/planes/metering/ARCHITECTURE.md): an append-only sample log keyed by an
 * idempotency key, and three rollups (hour, day, month) that each sample is added to in the same
 * transaction as its insert. No foreign key to workspaces: usage outlives a deleted workspace.
 */
const ROLLUPS = ['metering_hourly', 'metering_daily', 'metering_monthly'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metering_samples')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_name', 'text', (c) => c.notNull())
    .addColumn('resource_uuid', 'text', (c) => c.notNull())
    .addColumn('dimension', 'text', (c) => c.notNull())
    .addColumn('start_at', 'text', (c) => c.notNull())
    .addColumn('end_at', 'text', (c) => c.notNull())
    .addColumn('quantity', 'double precision', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
  // Audit and re-rollup by time: "what was recorded for this account in this hour".
  await db.schema
    .createIndex('metering_samples_by_time')
    .on('metering_samples')
    .columns(['account_id', 'start_at'])
    .execute();
  // SQLite: WITHOUT ROWID clusters each rollup on its primary key, so a period range of one
  // account is contiguous pages (no separate key index, no rowid lookups). PostgreSQL keeps a heap
  // plus the key's B-tree.
  const clustered = db.getExecutor().adapter instanceof SqliteAdapter;
  for (const table of ROLLUPS) {
    // The primary key leads with (account, period): every query is one account over a period range.
    await db.schema
      .createTable(table)
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('workspace', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_name', 'text', (c) => c.notNull())
      .addColumn('resource_uuid', 'text', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('quantity', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, [
        'account_id',
        'period',
        'workspace',
        'resource_type',
        'resource_name',
        'resource_uuid',
        'dimension',
      ])
      .$call((builder) => (clustered ? builder.modifyEnd(sql`without rowid`) : builder))
      .execute();
  }
}
