import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Table shape of migration 020-model-calls (kept beside its repository, like metering-tables.ts). */
export type ModelCallsTable = {
  request_id: string;
  account_id: string;
  workspace: string;
  model: string;
  model_uuid: string;
  provider: string;
  caller: string;
  status: number;
  latency_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  at: string;
};

/** One model gateway call (issue 18 "Usage tracking"). */
export interface ModelCallRow {
  /** Unique per call: writing a batch again inserts nothing twice. */
  requestId: string;
  accountId: string;
  workspace: string;
  model: string;
  modelUuid: string;
  provider: string;
  /** Principal id of the caller. */
  caller: string;
  status: number;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  /** ISO 8601 UTC. */
  at: string;
}

export interface ModelCallQuery {
  workspace: string;
  model: string;
  /** ISO bounds, [from, to). */
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
}

const BATCH = 500;

/** The model gateway's call log: batched inserts, newest-first reads per model, pruning by age. */
export function modelCallsRepository(base: Kysely<Database>) {
  const db = base.withTables<{ model_calls: ModelCallsTable }>();
  return {
    /** Inserts the calls; ones already recorded (same request id) are ignored. */
    async record(calls: readonly ModelCallRow[]): Promise<void> {
      for (let i = 0; i < calls.length; i += BATCH) {
        await db
          .insertInto('model_calls')
          .values(
            calls.slice(i, i + BATCH).map((c) => ({
              request_id: c.requestId,
              account_id: c.accountId,
              workspace: c.workspace,
              model: c.model,
              model_uuid: c.modelUuid,
              provider: c.provider,
              caller: c.caller,
              status: c.status,
              latency_ms: c.latencyMs,
              prompt_tokens: c.promptTokens,
              completion_tokens: c.completionTokens,
              total_tokens: c.totalTokens,
              at: c.at,
            })),
          )
          .onConflict((oc) => oc.column('request_id').doNothing())
          .execute();
      }
    },

    /** One model's calls in a workspace, newest first, at most `limit`. */
    async list(q: ModelCallQuery): Promise<ModelCallRow[]> {
      let query = db
        .selectFrom('model_calls')
        .selectAll()
        .where('workspace', '=', q.workspace)
        .where('model', '=', q.model);
      if (q.from !== undefined) query = query.where('at', '>=', q.from);
      if (q.to !== undefined) query = query.where('at', '<', q.to);
      const rows = await query.orderBy('at', 'desc').orderBy('request_id', 'desc').limit(q.limit).execute();
      return rows.map((r) => ({
        requestId: r.request_id,
        accountId: r.account_id,
        workspace: r.workspace,
        model: r.model,
        modelUuid: r.model_uuid,
        provider: r.provider,
        caller: r.caller,
        status: Number(r.status),
        latencyMs: Number(r.latency_ms),
        promptTokens: r.prompt_tokens === null ? null : Number(r.prompt_tokens),
        completionTokens: r.completion_tokens === null ? null : Number(r.completion_tokens),
        totalTokens: r.total_tokens === null ? null : Number(r.total_tokens),
        at: r.at,
      }));
    },

    /**
     * Deletes the calls recorded before `before` (ISO), `chunk` rows per statement (each its own
     * short transaction, so SQLite never holds the event loop for a whole backlog); resolves with
     * how many went.
     */
    async prune(before: string, chunk = 1000): Promise<number> {
      let total = 0;
      for (;;) {
        const result = await db
          .deleteFrom('model_calls')
          .where(
            'request_id',
            'in',
            db
              .selectFrom('model_calls')
              .select('request_id')
              .where('at', '<', before)
              .orderBy('at')
              .limit(chunk),
          )
          .executeTakeFirst();
        const n = Number(result.numDeletedRows);
        total += n;
        if (n < chunk) return total;
      }
    },
  };
}

export type ModelCallsRepository = ReturnType<typeof modelCallsRepository>;
