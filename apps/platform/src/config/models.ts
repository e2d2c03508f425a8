import { parseCidrList } from '../framework/destinations/destination-guard.js';
import type { PlatformEnv } from './env-schema.js';
import { asConfigError, boundedWholeNumber, optionalNumber } from './values.js';

/** The model gateway's upstream settings (issue 18). */
export interface ModelGatewayConfig {
  allowCidrs: string[];
  timeoutMs: number;
  retries: number;
  maxRetryDelayMs: number;
  /** Days a call record is kept. */
  callRetentionDays: number;
}

export function modelGatewayConfig(e: PlatformEnv): ModelGatewayConfig {
  return {
    allowCidrs: asConfigError(() =>
      parseCidrList(e.TARMAC_MODEL_UPSTREAM_ALLOW, 'TARMAC_MODEL_UPSTREAM_ALLOW'),
    ),
    timeoutMs:
      (optionalNumber(e.TARMAC_MODEL_TIMEOUT_SECONDS, 'TARMAC_MODEL_TIMEOUT_SECONDS', 'v', {
        min: 0.001,
        integer: false,
      }).v ?? 300) * 1000,
    retries:
      optionalNumber(e.TARMAC_MODEL_RETRIES, 'TARMAC_MODEL_RETRIES', 'v', { min: 0, integer: true }).v ?? 2,
    maxRetryDelayMs:
      (optionalNumber(e.TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS, 'TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS', 'v', {
        min: 0,
        integer: false,
      }).v ?? 10) * 1000,
    callRetentionDays: boundedWholeNumber(
      e.TARMAC_MODEL_CALL_RETENTION_DAYS,
      'TARMAC_MODEL_CALL_RETENTION_DAYS',
      30,
      1,
    ),
  };
}
