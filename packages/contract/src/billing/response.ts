import { z } from 'zod';
import { GROUP_BY_DIMENSIONS, RESOLUTIONS } from './dimensions.js';

const usage = z.number().optional().meta({
  description: 'Only when billing_dimension is among the groupBy dimensions (one unit per entry).',
});

export const metricsPointSchema = z
  .object({
    timestamp: z.string().meta({ description: 'Bucket start, RFC 3339 UTC.' }),
    cost: z.number().meta({ description: 'USD; 0 for a bucket without activity.' }),
    usage,
  })
  .meta({ id: 'MetricsPoint' });

export const metricsEntrySchema = z
  .object({
    workspace: z.string().optional(),
    resourceType: z.string().optional(),
    resourceName: z.string().optional(),
    resourceUuid: z.string().optional(),
    billingDimension: z.string().optional(),
    summary: z.object({ cost: z.number(), usage }),
    timeseries: z.array(metricsPointSchema),
  })
  .meta({ id: 'MetricsEntry' });
export type MetricsEntry = z.infer<typeof metricsEntrySchema>;

export const accountMetricsResponseSchema = z
  .object({
    startTime: z.string(),
    endTime: z.string(),
    resolution: z.enum(RESOLUTIONS),
    summary: z.object({
      totalCost: z.number().meta({ description: 'USD, sum of all group costs (every page).' }),
      totalUsage: usage,
    }),
    data: z.array(metricsEntrySchema),
    meta: z.object({
      hasMore: z.boolean(),
      nextCursor: z.string().meta({ description: 'Empty when there are no more pages.' }),
    }),
  })
  .meta({ id: 'AccountMetricsResponse' });
export type AccountMetricsResponse = z.infer<typeof accountMetricsResponseSchema>;

export const groupByValuesSchema = z
  .object({ values: z.array(z.enum(GROUP_BY_DIMENSIONS)) })
  .meta({ id: 'MetricsGroupByValues' });
export const resourceTypeValuesSchema = z
  .object({ values: z.array(z.string()) })
  .meta({ id: 'MetricsResourceTypeValues' });
