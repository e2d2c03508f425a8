/**
 * `GET /v0/models/{modelName}/usage` (issue 18 "Usage is queryable"; contract
 * resources/model-usage.ts): the model gateway's call records of one model in the caller's
 * workspace, newest first. The workspace comes from the pipeline's `WorkspaceAccess` (a member of
 * it), and the query is keyed by it: a caller of another workspace reads its own model of that
 * name, or a 404 — never these calls.
 */
import type { ModelSpec, ModelUsage, ModelUsageQuery } from '@tarmac/contract';
import { parseRfc3339Utc } from '@tarmac/contract';
import type { WorkspaceAccess } from '@tarmac/server-kit';
import type { Store } from '@tarmac/store';
import type { WorkloadService } from '../workloads/workload.service.js';

export interface ModelUsageDeps {
  store: Pick<Store, 'modelCalls'>;
  models: Pick<WorkloadService<ModelSpec>, 'get'>;
  /** How long call records are kept (TARMAC_MODEL_CALL_RETENTION_DAYS). */
  retentionDays: number;
}

const iso = (t: string | undefined) => {
  const ms = t === undefined ? undefined : parseRfc3339Utc(t);
  return ms === undefined ? undefined : new Date(ms).toISOString();
};

export class ModelUsageService {
  constructor(private readonly d: ModelUsageDeps) {}

  async usage(ws: WorkspaceAccess, name: string, q: ModelUsageQuery): Promise<ModelUsage> {
    await this.d.models.get(ws, name, false); // 404 in the catalogue's words when there is no such model
    const rows = await this.d.store.modelCalls.list({
      workspace: ws.name,
      model: name,
      from: iso(q.startTime),
      to: iso(q.endTime),
      limit: q.limit + 1,
    });
    return {
      model: name,
      workspace: ws.name,
      retentionDays: this.d.retentionDays,
      data: rows.slice(0, q.limit).map((r) => ({
        requestId: r.requestId,
        at: r.at,
        caller: r.caller,
        status: r.status,
        latencyMs: r.latencyMs,
        provider: r.provider,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        totalTokens: r.totalTokens,
      })),
      meta: { hasMore: rows.length > q.limit },
    };
  }
}
