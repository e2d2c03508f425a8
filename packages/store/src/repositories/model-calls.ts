import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Table shape of migration 020-model-calls (kept beside its repository, like metering-tables.ts). */
export type ModelCallBatchesTable = {
  batch_key: string;
  account_id: string;
  workspace: string;
  model: string;
  first_at: string;
  last_at: string;
  /** JSON array of `Packed` tuples. */
  calls: string;
};

/** One model gateway call (issue 18 "Usage tracking"). */
export interface ModelCallRow {
  /** Unique per call. */
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

/** A call as stored in its batch: [requestId, at, caller, status, latencyMs, provider, modelUuid, prompt, completion, total]. */
type Packed = [
  string,
  string,
  string,
  number,
  number,
  string,
  string,
  number | null,
  number | null,
  number | null,
];

/** Batches read per query round trip. */
const PAGE = 16;

/**
 * The model gateway's call log: one row per batch and model (migration 020), read back newest
 * call first. A batch written again inserts nothing (its key is a hash of its request ids).
 */
export function modelCallsRepository(base: Kysely<Database>) {
  const db = base.withTables<{ model_call_batches: ModelCallBatchesTable }>();
  return {
    /** Writes the calls as one row per (workspace, model); a batch already written is ignored. */
    async record(calls: readonly ModelCallRow[]): Promise<void> {
      const groups = new Map<string, ModelCallRow[]>();
      for (const c of calls) {
        const key = `${c.workspace}\u0000${c.model}`;
        const g = groups.get(key);
        if (g) g.push(c);
        else groups.set(key, [c]);
      }
      if (groups.size === 0) return;
      const rows = [...groups.values()].map((g) => {
        let first = g[0]!.at;
        let last = first;
        for (const c of g) {
          if (c.at < first) first = c.at;
          if (c.at > last) last = c.at;
        }
        const packed: Packed[] = g.map((c) => [
          c.requestId,
          c.at,
          c.caller,
          c.status,
          c.latencyMs,
          c.provider,
          c.modelUuid,
          c.promptTokens,
          c.completionTokens,
          c.totalTokens,
        ]);
        return {
          batch_key: createHash('sha256')
            .update(`${g[0]!.workspace}\u0000${g[0]!.model}\u0000${g.map((c) => c.requestId).join('\n')}`)
            .digest('base64url'),
          account_id: g[0]!.accountId,
          workspace: g[0]!.workspace,
          model: g[0]!.model,
          first_at: first,
          last_at: last,
          calls: JSON.stringify(packed),
        };
      });
      await db
        .insertInto('model_call_batches')
        .values(rows)
        .onConflict((oc) => oc.column('batch_key').doNothing())
        .execute();
    },

    /** One model's calls in a workspace, newest first, at most `limit`. */
    async list(q: ModelCallQuery): Promise<ModelCallRow[]> {
      const out: ModelCallRow[] = [];
      // Batches overlap in time (a slow call ends after a faster later one): a batch may still
      // hold calls newer than the oldest taken so far until its newest call is older than that.
      let after: { lastAt: string; key: string } | undefined;
      for (;;) {
        let query = db
          .selectFrom('model_call_batches')
          .selectAll()
          .where('workspace', '=', q.workspace)
          .where('model', '=', q.model);
        if (q.from !== undefined) query = query.where('last_at', '>=', q.from);
        if (q.to !== undefined) query = query.where('first_at', '<', q.to);
        if (after) {
          const { lastAt, key } = after;
          query = query.where((eb) =>
            eb.or([
              eb('last_at', '<', lastAt),
              eb.and([eb('last_at', '=', lastAt), eb('batch_key', '<', key)]),
            ]),
          );
        }
        const batches = await query
          .orderBy('last_at', 'desc')
          .orderBy('batch_key', 'desc')
          .limit(PAGE)
          .execute();
        for (const b of batches) {
          for (const p of JSON.parse(b.calls) as Packed[]) {
            const at = p[1];
            if ((q.from !== undefined && at < q.from) || (q.to !== undefined && at >= q.to)) continue;
            out.push({
              requestId: p[0],
              accountId: b.account_id,
              workspace: b.workspace,
              model: b.model,
              modelUuid: p[6],
              provider: p[5],
              caller: p[2],
              status: p[3],
              latencyMs: p[4],
              promptTokens: p[7],
              completionTokens: p[8],
              totalTokens: p[9],
              at,
            });
          }
        }
        out.sort((a, b) => (a.at === b.at ? (a.requestId < b.requestId ? 1 : -1) : a.at < b.at ? 1 : -1));
        const last = batches.at(-1);
        // Done when no older batch is left, or the `limit` newest are certain: every batch not read
        // yet ends before the limit-th call taken.
        if (!last || batches.length < PAGE) break;
        if (out.length >= q.limit && last.last_at < out[q.limit - 1]!.at) break;
        after = { lastAt: last.last_at, key: last.batch_key };
      }
      return out.slice(0, q.limit);
    },

    /**
     * Deletes the batches whose newest call is before `before` (ISO), `chunk` rows per statement
     * (each its own short transaction: SQLite never holds the event loop for a whole backlog);
     * resolves with how many batches went.
     */
    async prune(before: string, chunk = 200): Promise<number> {
      let total = 0;
      for (;;) {
        const result = await db
          .deleteFrom('model_call_batches')
          .where(
            'batch_key',
            'in',
            db
              .selectFrom('model_call_batches')
              .select('batch_key')
              .where('last_at', '<', before)
              .orderBy('last_at')
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
