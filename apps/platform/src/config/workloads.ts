import type { PlatformEnv } from './env-schema.js';
import { parseCidrList } from '../framework/destinations/destination-guard.js';
import { asConfigError, boundedWholeNumber, ConfigError } from './values.js';

/** The jobs plane's settings (planes/jobs/ARCHITECTURE.md). */
export interface JobsConfig {
  capacityPerWorkspace: number;
  graceSeconds: number;
  executionTimeoutSeconds: number;
}

/** The run plane's settings (planes/run/ARCHITECTURE.md). */
export interface RunConfig {
  readyTimeoutMs: number;
  /** CPU cores a replica may use until it answers (a start-up boost); 0: none. */
  startupCpuCores: number;
  holdMs: number;
  async: {
    concurrency: number;
    queue: number;
    maxBodyBytes: number;
    callbackAllowCidrs: string[];
  };
  /** Idle time before a replica is frozen (STANDBY); 0: never (planes/run/idle-policy.ts). */
  standbyAfterMs: number;
  /** Idle time before a replica is stopped (scale to zero); 0: never. */
  stopAfterMs: number;
  /** The autoscaler's (planes/run/autoscaler.ts; defaults and why there). */
  autoscale: RunAutoscaleConfig;
}

export interface RunAutoscaleConfig {
  targetConcurrency: number;
  stableWindowMs: number;
  panicWindowMs: number;
  maxReplicas: number;
}

export function jobsConfig(e: PlatformEnv): JobsConfig {
  return {
    capacityPerWorkspace: boundedWholeNumber(
      e.TARMAC_JOBS_WORKSPACE_CAPACITY,
      'TARMAC_JOBS_WORKSPACE_CAPACITY',
      16,
      1,
    ),
    graceSeconds: boundedWholeNumber(
      e.TARMAC_JOBS_CANCEL_GRACE_SECONDS,
      'TARMAC_JOBS_CANCEL_GRACE_SECONDS',
      10,
      0,
    ),
    executionTimeoutSeconds: boundedWholeNumber(
      e.TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS,
      'TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS',
      86_400,
      1,
    ),
  };
}

export function runConfig(e: PlatformEnv): RunConfig {
  return {
    readyTimeoutMs:
      1000 *
      boundedWholeNumber(e.TARMAC_RUN_READY_TIMEOUT_SECONDS, 'TARMAC_RUN_READY_TIMEOUT_SECONDS', 60, 1),
    startupCpuCores: boundedWholeNumber(e.TARMAC_RUN_STARTUP_CPU_CORES, 'TARMAC_RUN_STARTUP_CPU_CORES', 1, 0),
    holdMs: 1000 * boundedWholeNumber(e.TARMAC_RUN_HOLD_SECONDS, 'TARMAC_RUN_HOLD_SECONDS', 60, 1),
    async: {
      concurrency: boundedWholeNumber(e.TARMAC_RUN_ASYNC_CONCURRENCY, 'TARMAC_RUN_ASYNC_CONCURRENCY', 4, 1),
      queue: boundedWholeNumber(e.TARMAC_RUN_ASYNC_QUEUE, 'TARMAC_RUN_ASYNC_QUEUE', 100, 0),
      maxBodyBytes:
        1024 * boundedWholeNumber(e.TARMAC_RUN_ASYNC_MAX_BODY_KB, 'TARMAC_RUN_ASYNC_MAX_BODY_KB', 1024, 1),
      callbackAllowCidrs: asConfigError(() =>
        parseCidrList(e.TARMAC_CALLBACK_ALLOW, 'TARMAC_CALLBACK_ALLOW'),
      ),
    },
    // Why these defaults: planes/run/ARCHITECTURE.md "Settings".
    standbyAfterMs:
      1000 *
      boundedWholeNumber(e.TARMAC_RUN_STANDBY_AFTER_SECONDS, 'TARMAC_RUN_STANDBY_AFTER_SECONDS', 30, 0),
    stopAfterMs:
      1000 * boundedWholeNumber(e.TARMAC_RUN_STOP_AFTER_SECONDS, 'TARMAC_RUN_STOP_AFTER_SECONDS', 900, 0),
    autoscale: runAutoscaleConfig(e),
  };
}

function runAutoscaleConfig(e: PlatformEnv): RunAutoscaleConfig {
  const stable = boundedWholeNumber(
    e.TARMAC_RUN_STABLE_WINDOW_SECONDS,
    'TARMAC_RUN_STABLE_WINDOW_SECONDS',
    60,
    1,
  );
  const panic = boundedWholeNumber(
    e.TARMAC_RUN_PANIC_WINDOW_SECONDS,
    'TARMAC_RUN_PANIC_WINDOW_SECONDS',
    6,
    1,
  );
  if (panic > stable) {
    throw new ConfigError(
      `TARMAC_RUN_PANIC_WINDOW_SECONDS (${panic}) must not exceed TARMAC_RUN_STABLE_WINDOW_SECONDS (${stable})`,
    );
  }
  const maxReplicas = boundedWholeNumber(e.TARMAC_RUN_MAX_REPLICAS, 'TARMAC_RUN_MAX_REPLICAS', 10, 1);
  if (maxReplicas > 100) {
    throw new ConfigError(
      `TARMAC_RUN_MAX_REPLICAS must be at most 100 (maxScale's bound), got "${maxReplicas}"`,
    );
  }
  return {
    targetConcurrency: boundedWholeNumber(
      e.TARMAC_RUN_TARGET_CONCURRENCY,
      'TARMAC_RUN_TARGET_CONCURRENCY',
      10,
      1,
    ),
    stableWindowMs: stable * 1000,
    panicWindowMs: panic * 1000,
    maxReplicas,
  };
}
