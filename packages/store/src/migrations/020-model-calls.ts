import type { Kysely } from 'kysely';

/**
 * The model gateway's call log (issue 18 "Usage tracking": every call's tokens, latency, status,
 * model and caller, queryable per call). Written in batches by the gateway's usage recorder, never
 * on the request path; read newest first per (workspace, model); pruned by age (bounded retention).
 * No foreign keys: a call record outlives its model, as billing samples do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('model_calls')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('model_uuid', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('caller', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('latency_ms', 'double precision', (c) => c.notNull())
    // Null when neither the provider reported usage nor the gateway could estimate it (e.g. a 401).
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  // The query: one model of one workspace, a time range, newest first.
  await db.schema
    .createIndex('model_calls_by_model')
    .on('model_calls')
    .columns(['workspace', 'model', 'at', 'request_id'])
    .execute();
  // Retention: delete everything older than a cutoff.
  await db.schema.createIndex('model_calls_by_time').on('model_calls').column('at').execute();
}
