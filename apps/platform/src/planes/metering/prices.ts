import { BILLING_DIMENSION_NAMES, type BillingDimension } from '@tarmac/contract';
import { z } from 'zod';

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
  // The provider bills the tokens; the platform charges nothing on top unless the operator says so.
  model_input_tokens_count: 0,
  model_output_tokens_count: 0,
  model_requests_count: 0,
};

/** Shape of TARMAC_METERING_PRICES (parsed in config.ts): any subset of the dimensions. */
export const priceOverridesSchema = z.partialRecord(
  z.enum(BILLING_DIMENSION_NAMES as [BillingDimension, ...BillingDimension[]]),
  z.number().nonnegative().finite(),
);
