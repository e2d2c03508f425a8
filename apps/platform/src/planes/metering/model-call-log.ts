/**
 * The model gateway's per-call log (issue 18 "Usage tracking": every call's tokens, latency, status,
 * model and caller, queryable — `GET /v0/models/{model}/usage`, catalogue/models/model-usage.ts).
 * The gateway's usage recorder hands each batch here after the billing samples
 * (model-usage.ts), so nothing is written on the request path; the store keeps a batch as one row
 * per model (store migration 020). Retention pruning runs from the batch write at most once a
 * minute, in small deletes that each yield to the event loop: with SQLite (synchronous under the
 * async API) one big delete would stall every request being answered meanwhile.
 */
import type { ModelCallRow, Store } from '@tarmac/store';
import type { MeteredModelCall } from './model-usage.js';

/** What the log reads of the gateway's call record (planes/model-gateway/usage-recorder.ts). */
export interface LoggedModelCall extends MeteredModelCall {
  provider: string;
  caller: string;
  latencyMs: number;
  usage: { prompt: number; completion: number; total: number } | undefined;
}

export interface ModelCallLogOptions {
  /** Calls older than this are deleted. */
  retentionMs: number;
  now?: () => number;
  /** How often old calls are pruned. */
  pruneEveryMs?: number;
}

const DAY = 86_400_000;

export function modelCallRows(calls: readonly LoggedModelCall[]): ModelCallRow[] {
  return calls.map((c) => ({
    requestId: c.requestId,
    accountId: c.accountId,
    workspace: c.workspace,
    model: c.model,
    modelUuid: c.modelUuid,
    provider: c.provider,
    caller: c.caller,
    status: c.status,
    // Microseconds are noise at this scale; three decimals keep the rows small.
    latencyMs: Math.round(c.latencyMs * 1000) / 1000,
    promptTokens: c.usage ? c.usage.prompt : null,
    completionTokens: c.usage ? c.usage.completion : null,
    totalTokens: c.usage ? c.usage.total : null,
    at: new Date(c.at).toISOString(),
  }));
}

export function modelCallLog(store: Pick<Store, 'modelCalls'>, o: ModelCallLogOptions) {
  const now = o.now ?? Date.now;
  const pruneEveryMs = o.pruneEveryMs ?? 60_000;
  let prunedAt = 0;
  const log = {
    retentionDays: o.retentionMs / DAY,

    /** Writes the calls (a call already written is ignored: a retried batch counts once). */
    async record(calls: readonly LoggedModelCall[]): Promise<void> {
      await store.modelCalls.record(modelCallRows(calls));
      if (now() - prunedAt >= pruneEveryMs) {
        prunedAt = now();
        await log.prune();
      }
    },

    /** Deletes the calls past retention; resolves with how many went. */
    async prune(): Promise<number> {
      return store.modelCalls.prune(new Date(now() - o.retentionMs).toISOString());
    },
  };
  return log;
}
export type ModelCallLog = ReturnType<typeof modelCallLog>;
