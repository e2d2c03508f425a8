import { z } from 'zod';
import { parseRfc3339Utc } from '../billing/query.js';
import { defineRoute } from '../route.js';
import { nameParams } from './crud-routes.js';

/**
 * Per-call usage of a model (issue 18 "Usage tracking … queryable"): `GET /v0/models/{modelName}/usage`
 * answers the gateway's call records of that model in the caller's workspace, newest first —
 * tokens, latency, status and caller of each call. Token totals per model and period are in the
 * billing metrics API (resource type `model`); this route is the per-call view. Records are
 * written in batches (about a second after the call) and kept `TARMAC_MODEL_CALL_RETENTION_DAYS`.
 */
export const DEFAULT_MODEL_USAGE_LIMIT = 100;
export const MAX_MODEL_USAGE_LIMIT = 1000;

const timeParam = (description: string) =>
  z
    .string()
    .refine((t) => parseRfc3339Utc(t) !== undefined, {
      message: 'must be an RFC 3339 timestamp in UTC, e.g. 2026-05-01T00:00:00Z',
    })
    .optional()
    .meta({ description });

export const modelUsageQuerySchema = z
  .object({
    startTime: timeParam('Only calls at or after this time (RFC 3339 UTC).'),
    endTime: timeParam(
      'Only calls before this time (RFC 3339 UTC); to page back, pass the oldest `at` seen.',
    ),
    limit: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(MAX_MODEL_USAGE_LIMIT, `must be at most ${MAX_MODEL_USAGE_LIMIT}`)
      .default(DEFAULT_MODEL_USAGE_LIMIT)
      .meta({ description: `Calls to return, newest first; default ${DEFAULT_MODEL_USAGE_LIMIT}.` }),
  })
  .superRefine((q, ctx) => {
    const start = q.startTime === undefined ? undefined : parseRfc3339Utc(q.startTime);
    const end = q.endTime === undefined ? undefined : parseRfc3339Utc(q.endTime);
    if (start !== undefined && end !== undefined && end <= start)
      ctx.addIssue({ code: 'custom', path: ['endTime'], message: 'must be after startTime' });
  });
export type ModelUsageQuery = z.output<typeof modelUsageQuerySchema>;

const tokens = (description: string) => z.number().int().nullable().meta({ description });

export const modelCallSchema = z
  .object({
    requestId: z.string(),
    at: z.string().meta({ description: 'When the call ended (RFC 3339 UTC).' }),
    caller: z.string().meta({ description: 'Principal id of the caller (user or service account).' }),
    status: z.number().int().meta({ description: 'HTTP status the caller got; 499: the caller went away.' }),
    latencyMs: z.number().meta({ description: 'From the request to the end of the answer, in ms.' }),
    provider: z.string().meta({ description: "The model's `spec.runtime.type` at the time." }),
    promptTokens: tokens('Null when the call produced no usage (e.g. refused before the provider).'),
    completionTokens: tokens('Null when the call produced no usage.'),
    totalTokens: tokens('Null when the call produced no usage.'),
  })
  .meta({ id: 'ModelCall' });
export type ModelCall = z.infer<typeof modelCallSchema>;

export const modelUsageSchema = z
  .object({
    model: z.string(),
    workspace: z.string(),
    retentionDays: z.number().meta({ description: 'Calls older than this are no longer kept.' }),
    data: z.array(modelCallSchema),
    meta: z.object({ hasMore: z.boolean().meta({ description: 'More calls match beyond `limit`.' }) }),
  })
  .meta({ id: 'ModelUsage' });
export type ModelUsage = z.infer<typeof modelUsageSchema>;

export const modelUsageRoute = defineRoute({
  operationId: 'getModelUsage',
  method: 'get',
  path: '/v0/models/{modelName}/usage',
  summary: 'Per-call usage of a model through the gateway, newest first',
  description:
    'Each call through `{run_url}/{workspace}/models/{modelName}`: tokens, latency, status and caller. ' +
    'Recorded in batches about a second after the call; kept for `retentionDays`. Totals per period are in ' +
    'the billing metrics API (resource type `model`).',
  tag: 'models',
  auth: 'workspace',
  params: nameParams('modelName'),
  query: modelUsageQuerySchema,
  response: modelUsageSchema,
  errors: [404],
});
