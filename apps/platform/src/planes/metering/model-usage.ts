/**
 * Model gateway usage as billing samples (issue 18 "visible per model in the billing metrics
 * API"): each call the gateway records becomes up to three count samples of the model —
 * `model_input_tokens_count`, `model_output_tokens_count`, `model_requests_count` — keyed by the
 * call's id, so a batch written twice counts once (metering's idempotency keys). Grouping by
 * `resource_name` answers "tokens per model"; the gateway's call record (latency, status, caller)
 * is logged with each batch.
 */
import type { Store, UsageSample } from '@tarmac/store';

/** The fields of the gateway's call record this sink reads (planes/model-gateway/usage-recorder.ts). */
export interface MeteredModelCall {
  requestId: string;
  at: number;
  accountId: string;
  workspace: string;
  model: string;
  modelUuid: string;
  status: number;
  usage: { prompt: number; completion: number } | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function modelUsageSamples(calls: readonly MeteredModelCall[]): UsageSample[] {
  const samples: UsageSample[] = [];
  for (const c of calls) {
    if (!c.accountId) continue;
    const base = {
      accountId: c.accountId,
      workspace: c.workspace,
      resourceType: 'model',
      resourceName: c.model,
      resourceUuid: c.modelUuid,
      startAt: iso(c.at),
      endAt: iso(c.at + 1),
    };
    const add = (dimension: string, quantity: number) =>
      quantity > 0 &&
      samples.push({
        ...base,
        dimension,
        quantity,
        idempotencyKey: `${c.modelUuid}/${dimension}/${c.requestId}`,
      });
    add('model_requests_count', 1);
    add('model_input_tokens_count', c.usage?.prompt ?? 0);
    add('model_output_tokens_count', c.usage?.completion ?? 0);
  }
  return samples;
}

export function modelUsageSink(store: Pick<Store, 'metering'>, now: () => number = Date.now) {
  return {
    async record(calls: readonly MeteredModelCall[]): Promise<void> {
      await store.metering.record(modelUsageSamples(calls), iso(now()));
    },
  };
}
