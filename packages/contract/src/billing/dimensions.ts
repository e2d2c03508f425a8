/**
 * The billing vocabulary of the spec ("Billing entities" table and "Billing metrics API"): every
 * billing dimension with the raw resource type that produces it and its unit, the five groupBy
 * dimensions in their canonical order, and the bucket resolutions with their window caps.
 */
export const BILLING_DIMENSIONS = {
  sandbox_compute_runtime_gbs: { resourceType: 'sandbox', unit: 'gbs' },
  sandbox_image_storage_gbs: { resourceType: 'sandbox', unit: 'gbs' },
  sandbox_snapshot_storage_gbs: { resourceType: 'sandbox', unit: 'gbs' },
  agent_compute_runtime_gbs: { resourceType: 'agent', unit: 'gbs' },
  agent_image_storage_gbs: { resourceType: 'agent', unit: 'gbs' },
  agent_async_requests_count: { resourceType: 'agent', unit: 'count' },
  job_compute_runtime_gbs: { resourceType: 'job', unit: 'gbs' },
  job_image_storage_gbs: { resourceType: 'job', unit: 'gbs' },
  mcp_server_compute_runtime_gbs: { resourceType: 'mcp_server', unit: 'gbs' },
  mcp_server_image_storage_gbs: { resourceType: 'mcp_server', unit: 'gbs' },
  volume_storage_gbs: { resourceType: 'volume', unit: 'gbs' },
  custom_domain_active_time_hours: { resourceType: 'custom_domain', unit: 'hours' },
  // The model gateway (issue 18): tokens as providers reported them, and calls.
  model_input_tokens_count: { resourceType: 'model', unit: 'count' },
  model_output_tokens_count: { resourceType: 'model', unit: 'count' },
  model_requests_count: { resourceType: 'model', unit: 'count' },
} as const;

export type BillingDimension = keyof typeof BILLING_DIMENSIONS;
export const BILLING_DIMENSION_NAMES = Object.keys(BILLING_DIMENSIONS) as BillingDimension[];

/** Raw resource types (reference §1.19). */
export const BILLING_RESOURCE_TYPES = [
  'sandbox',
  'agent',
  'job',
  'mcp_server',
  'volume',
  'custom_domain',
  'model',
] as const;
export type BillingResourceType = (typeof BILLING_RESOURCE_TYPES)[number];

/** The groupBy dimensions in canonical order: a groupBy is sorted into this order. */
export const GROUP_BY_DIMENSIONS = [
  'workspace',
  'resource_type',
  'resource_name',
  'resource_uuid',
  'billing_dimension',
] as const;
export type GroupByDimension = (typeof GROUP_BY_DIMENSIONS)[number];
export const MAX_GROUP_BY = 3;

export const RESOLUTIONS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

const DAY_MS = 86_400_000;
/** Longest window per explicit resolution (spec "Limits"); monthly is unbounded. */
export const RESOLUTION_MAX_WINDOW_MS: Record<Resolution, number> = {
  hourly: 7 * DAY_MS,
  daily: 90 * DAY_MS,
  weekly: 365 * DAY_MS,
  monthly: Number.POSITIVE_INFINITY,
};

/** Spec: under 7 days hourly; under 90 days daily; under 1 year weekly; 1 year or more monthly. */
export function defaultResolution(windowMs: number): Resolution {
  if (windowMs < 7 * DAY_MS) return 'hourly';
  if (windowMs < 90 * DAY_MS) return 'daily';
  if (windowMs < 365 * DAY_MS) return 'weekly';
  return 'monthly';
}

/** Billing page size (spec "Limits"): default 100, larger values clamped silently. */
export const BILLING_PAGE_SIZE = 100;
