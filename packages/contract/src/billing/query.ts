import { z } from 'zod';
import {
  BILLING_DIMENSION_NAMES,
  BILLING_PAGE_SIZE,
  GROUP_BY_DIMENSIONS,
  MAX_GROUP_BY,
  RESOLUTION_MAX_WINDOW_MS,
  RESOLUTIONS,
  type GroupByDimension,
} from './dimensions.js';

/**
 * Query parameters of the billing metrics API (spec "Billing metrics API" and "Errors": every
 * rule below is a 400 naming the parameter). Parsing here, in the contract, keeps the server, the
 * SDK and the OpenAPI document on one definition.
 */

/** RFC 3339 in UTC: `Z` or a zero offset, optional fraction. */
const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]00:00)$/i;

/** Epoch milliseconds of an RFC 3339 UTC timestamp, or undefined when it is not one (e.g. 2026-02-30). */
export function parseRfc3339Utc(text: string): number | undefined {
  const m = RFC3339_UTC.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) + Math.floor(Number(`0${m[7] ?? ''}`) * 1000);
  const back = new Date(ms);
  const sameFields =
    back.getUTCFullYear() === y &&
    back.getUTCMonth() === mo - 1 &&
    back.getUTCDate() === d &&
    back.getUTCHours() === h &&
    back.getUTCMinutes() === mi &&
    back.getUTCSeconds() === s;
  return sameFields ? ms : undefined;
}

const timeParam = (description: string) =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .refine((t) => parseRfc3339Utc(t) !== undefined, {
      message: 'must be an RFC 3339 timestamp in UTC, e.g. 2026-05-01T00:00:00Z',
    })
    .meta({ description });

/** `groupBy`: one to three distinct dimensions, returned in canonical order. */
export const groupBySchema = z
  .string()
  .transform((text, ctx) => {
    const names = text.split(',').map((n) => n.trim());
    const known = new Set<string>(GROUP_BY_DIMENSIONS);
    for (const name of names) {
      if (!known.has(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown dimension "${name}"; valid: ${GROUP_BY_DIMENSIONS.join(', ')}`,
        });
        return z.NEVER;
      }
    }
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate !== undefined) {
      ctx.addIssue({ code: 'custom', message: `duplicate dimension "${duplicate}"` });
      return z.NEVER;
    }
    if (names.length > MAX_GROUP_BY) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_GROUP_BY} dimensions, got ${names.length}` });
      return z.NEVER;
    }
    return GROUP_BY_DIMENSIONS.filter((d) => names.includes(d)) as GroupByDimension[];
  })
  .meta({
    description: `One to ${MAX_GROUP_BY} comma-separated dimensions from ${GROUP_BY_DIMENSIONS.join(', ')}; order does not matter; the result is their cross product.`,
  });

/** Parameters the platform does not support; sending them is a 400 (spec "Errors"). */
const UNSUPPORTED_PARAMS = ['label', 'unit'] as const;

export const accountMetricsQuerySchema = z
  .looseObject({
    startTime: timeParam('Window start (inclusive), RFC 3339 UTC.'),
    endTime: timeParam('Window end (exclusive), RFC 3339 UTC.'),
    resolution: z
      .enum(RESOLUTIONS, { error: `must be one of ${RESOLUTIONS.join(', ')}` })
      .optional()
      .meta({ description: 'Bucket size; picked from the window length when omitted.' }),
    groupBy: groupBySchema.optional(),
    workspace: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .meta({ description: 'Only this workspace (account admins only).' }),
    resourceType: z.string().min(1, 'must not be empty').optional(),
    resourceName: z.string().min(1, 'must not be empty').optional(),
    resourceUuid: z.string().min(1, 'must not be empty').optional(),
    billingDimension: z
      .enum(BILLING_DIMENSION_NAMES as [string, ...string[]], {
        error: `must be one of ${BILLING_DIMENSION_NAMES.join(', ')}`,
      })
      .optional(),
    limit: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .transform((n) => Math.min(n, BILLING_PAGE_SIZE))
      .default(BILLING_PAGE_SIZE)
      .meta({
        description: `Groups per page; default and maximum ${BILLING_PAGE_SIZE} (larger values are clamped).`,
      }),
    cursor: z.string().max(4096).optional().meta({ description: 'Opaque, from `meta.nextCursor`.' }),
  })
  .superRefine((q, ctx) => {
    for (const name of UNSUPPORTED_PARAMS) {
      if (name in q) ctx.addIssue({ code: 'custom', path: [name], message: 'is not supported' });
    }
    const start = parseRfc3339Utc(q.startTime);
    const end = parseRfc3339Utc(q.endTime);
    if (start === undefined || end === undefined) return;
    if (end <= start) {
      ctx.addIssue({ code: 'custom', path: ['endTime'], message: 'must be after startTime' });
      return;
    }
    if (q.resolution && end - start > RESOLUTION_MAX_WINDOW_MS[q.resolution]) {
      const days = RESOLUTION_MAX_WINDOW_MS[q.resolution] / 86_400_000;
      ctx.addIssue({
        code: 'custom',
        path: ['resolution'],
        message: `${q.resolution} allows a window of at most ${days} days; use a coarser resolution`,
      });
    }
  });
export type AccountMetricsQuery = z.output<typeof accountMetricsQuerySchema>;

export const metricsWindowQuerySchema = z
  .object({
    startTime: timeParam('Window start (inclusive), RFC 3339 UTC.'),
    endTime: timeParam('Window end (exclusive), RFC 3339 UTC.'),
  })
  .superRefine((q, ctx) => {
    const start = parseRfc3339Utc(q.startTime);
    const end = parseRfc3339Utc(q.endTime);
    if (start !== undefined && end !== undefined && end <= start) {
      ctx.addIssue({ code: 'custom', path: ['endTime'], message: 'must be after startTime' });
    }
  });
export type MetricsWindowQuery = z.output<typeof metricsWindowQuerySchema>;

export const accountIdParamSchema = z.object({ accountId: z.string().min(1) });
