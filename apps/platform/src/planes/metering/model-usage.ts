/**
 * Model gateway usage as billing samples (issue 18 "visible per model in the billing metrics
 * API"): the calls of one batch are summed per model, UTC hour and dimension —
 * `model_input_tokens_count`, `model_output_tokens_count`, `model_requests_count` — into one
 * sample each (a few rows per batch instead of three per call: the write stays off the gateway's
 * CPU budget). A sample's idempotency key names the calls it sums (a hash of their ids), so a
 * batch written again after an ambiguous failure counts once. Grouping the metrics API by
 * `resource_name` answers "tokens per model".
 */
import { createHash } from 'node:crypto';
import type { Store, UsageSample } from '@tarmac/store';
import { planSegments } from './calendar.js';

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

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const DIMENSIONS = ['model_requests_count', 'model_input_tokens_count', 'model_output_tokens_count'] as const;

export function modelUsageSamples(calls: readonly MeteredModelCall[]): UsageSample[] {
  const groups = new Map<string, { calls: MeteredModelCall[]; hour: number }>();
  for (const c of calls) {
    if (!c.accountId) continue;
    const hour = Math.floor(c.at / HOUR) * HOUR;
    const key = `${c.modelUuid}|${hour}`;
    const g = groups.get(key) ?? { calls: [], hour };
    g.calls.push(c);
    groups.set(key, g);
  }
  const samples: UsageSample[] = [];
  for (const { calls: group, hour } of groups.values()) {
    const first = group[0]!;
    const ids = createHash('sha256')
      .update(group.map((c) => c.requestId).join('\n'))
      .digest('base64url')
      .slice(0, 22);
    const sums = {
      model_requests_count: group.length,
      model_input_tokens_count: group.reduce((n, c) => n + (c.usage?.prompt ?? 0), 0),
      model_output_tokens_count: group.reduce((n, c) => n + (c.usage?.completion ?? 0), 0),
    };
    const from = Math.min(...group.map((c) => c.at));
    const to = Math.min(hour + HOUR, Math.max(...group.map((c) => c.at)) + 1);
    for (const dimension of DIMENSIONS) {
      if (sums[dimension] <= 0) continue;
      samples.push({
        idempotencyKey: `${first.modelUuid}/${dimension}/${hour}/${ids}`,
        accountId: first.accountId,
        workspace: first.workspace,
        resourceType: 'model',
        resourceName: first.model,
        resourceUuid: first.modelUuid,
        dimension,
        startAt: iso(from),
        endAt: iso(Math.max(to, from + 1)),
        quantity: sums[dimension],
      });
    }
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

/**
 * A model's input and output tokens from `fromMs` (an hour boundary) to now, from the rollups: the
 * gateway seeds its maxToken counts with it after a restart (model-gateway/token-budget.ts).
 */
export function modelUsageHistory(store: Pick<Store, 'metering'>, now: () => number = Date.now) {
  return {
    async tokensSince(m: { accountId: string; uuid: string }, fromMs: number) {
      const segments = planSegments('monthly', fromMs, now() + HOUR);
      const rows = await store.metering.aggregate({
        accountId: m.accountId,
        segments,
        filters: { resource_uuid: m.uuid },
        groupColumns: ['dimension'],
        prices: {},
      });
      const of = (d: string) => rows.find((r) => r.keys[0] === d)?.usage ?? 0;
      return { input: of('model_input_tokens_count'), output: of('model_output_tokens_count') };
    },
  };
}
