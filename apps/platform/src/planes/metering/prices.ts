import { BILLING_DIMENSION_NAMES, type BillingDimension } from '@tarmac/contract';
import { z } from 'zod';
import { ConfigError } from '../../config.js';

/** USD per unit of each billing dimension (issue "Metering": cost = usage × price). */
export type PriceTable = Readonly<Record<BillingDimension, number>>;

const COMPUTE_PER_GBS = 0.000023; // ≈ $0.083 per GB-hour of RUNNING memory
const STORAGE_PER_GBS = 0.00000004; // ≈ $0.10 per GB-month (30 days) of stored bytes

/** Defaults, documented in ARCHITECTURE.md "Prices"; TARMAC_METERING_PRICES overrides any of them. */
export const DEFAULT_PRICES: PriceTable = {
  sandbox_compute_runtime_gbs: COMPUTE_PER_GBS,
  sandbox_image_storage_gbs: STORAGE_PER_GBS,
  sandbox_snapshot_storage_gbs: STORAGE_PER_GBS,
  agent_compute_runtime_gbs: COMPUTE_PER_GBS,
  agent_image_storage_gbs: STORAGE_PER_GBS,
  agent_async_requests_count: 0.000002,
  job_compute_runtime_gbs: COMPUTE_PER_GBS,
  job_image_storage_gbs: STORAGE_PER_GBS,
  mcp_server_compute_runtime_gbs: COMPUTE_PER_GBS,
  mcp_server_image_storage_gbs: STORAGE_PER_GBS,
  volume_storage_gbs: STORAGE_PER_GBS,
  custom_domain_active_time_hours: 0.01,
};

const overridesSchema = z.partialRecord(
  z.enum(BILLING_DIMENSION_NAMES as [BillingDimension, ...BillingDimension[]]),
  z.number().nonnegative().finite(),
);

export class PriceConfigError extends ConfigError {}

/** Prices from a JSON object of overrides, e.g. `{"sandbox_compute_runtime_gbs": 0.00003}`. */
export function resolvePrices(overridesJson: string | undefined): PriceTable {
  if (!overridesJson) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(overridesJson);
  } catch {
    throw new PriceConfigError('TARMAC_METERING_PRICES must be a JSON object of dimension → USD per unit');
  }
  const result = overridesSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new PriceConfigError(
      `TARMAC_METERING_PRICES: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return { ...DEFAULT_PRICES, ...result.data };
}
