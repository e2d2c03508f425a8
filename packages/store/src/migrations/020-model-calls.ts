import type { Kysely } from 'kysely';

/**
 * The model gateway's call log (issue 18 "Usage tracking": every call's tokens, latency, status,
 * model and caller, queryable per call). The gateway writes its calls in batches, off the request
 * path; each batch of one model is ONE row holding its calls as a JSON array (a row per call cost
 * ~13 µs of the gateway's CPU per call in SQLite: three index updates and a bound parameter per
 * column; a batch row costs ~1 µs a call). Reads walk one model's batches newest first; pruning
 * deletes batches past retention. No foreign keys: a call record outlives its model, as billing
 * samples do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('model_call_batches')
    // A hash of the batch's request ids: a batch written again (after an ambiguous failure) is one row.
    .addColumn('batch_key', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    // ISO bounds of the calls' times, [first_at, last_at].
    .addColumn('first_at', 'text', (c) => c.notNull())
    .addColumn('last_at', 'text', (c) => c.notNull())
    .addColumn('calls', 'text', (c) => c.notNull())
    .execute();
  // The query: one model of one workspace, newest batches first.
  await db.schema
    .createIndex('model_call_batches_by_model')
    .on('model_call_batches')
    .columns(['workspace', 'model', 'last_at', 'batch_key'])
    .execute();
  // Retention: delete the batches whose newest call is older than a cutoff.
  await db.schema
    .createIndex('model_call_batches_by_time')
    .on('model_call_batches')
    .column('last_at')
    .execute();
}
