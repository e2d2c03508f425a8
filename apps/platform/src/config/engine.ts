import { lifecycleDurationSeconds } from '@tarmac/contract';
import type { EngineConfig } from '../planes/sandbox/controllers/engine-config.js';
import { parsePoolShapes } from '../planes/sandbox/pool/pool-shapes.js';
import type { PlatformEnv } from './env-schema.js';
import { asConfigError, ConfigError, megabytes, optionalNumber, wholeNumber } from './values.js';

function poolHot(text: string | undefined): boolean {
  if (text === undefined || text === '1') return true;
  if (text === '0') return false;
  throw new ConfigError(`TARMAC_POOL_HOT must be 1 or 0, got "${text}"`);
}

/** The sandbox engine's settings (planes/sandbox/controllers/ARCHITECTURE.md). */
export function engineConfig(e: PlatformEnv): EngineConfig {
  const standbyText = e.TARMAC_STANDBY_AFTER ?? '15s';
  const standbySeconds = lifecycleDurationSeconds(
    /^\d+$/.test(standbyText) ? `${standbyText}s` : standbyText,
  );
  if (standbySeconds === undefined || standbySeconds < 1) {
    throw new ConfigError(
      `TARMAC_STANDBY_AFTER must be seconds or a duration like 15s or 2m, got "${standbyText}"`,
    );
  }
  const minAgeText = e.TARMAC_STANDBY_MIN_AGE;
  const minAgeSeconds =
    minAgeText === undefined
      ? undefined
      : /^\d+$/.test(minAgeText)
        ? Number(minAgeText)
        : lifecycleDurationSeconds(minAgeText);
  if (minAgeText !== undefined && minAgeSeconds === undefined) {
    throw new ConfigError(
      `TARMAC_STANDBY_MIN_AGE must be seconds or a duration like 10s, got "${minAgeText}"`,
    );
  }
  const graceText = e.TARMAC_ORPHAN_GRACE_SECONDS ?? '60';
  if (!/^\d+$/.test(graceText)) {
    throw new ConfigError(`TARMAC_ORPHAN_GRACE_SECONDS must be whole seconds, got "${graceText}"`);
  }
  const startWait = wholeNumber(
    e.TARMAC_SANDBOX_START_WAIT_SECONDS,
    'TARMAC_SANDBOX_START_WAIT_SECONDS',
    120,
  );
  const startWaitMax = wholeNumber(e.TARMAC_SANDBOX_START_WAIT_MAX, 'TARMAC_SANDBOX_START_WAIT_MAX', 1000);
  return {
    pool: asConfigError(() => parsePoolShapes(e.TARMAC_POOL)),
    poolHot: poolHot(e.TARMAC_POOL_HOT),
    orphanGraceMs: Number(graceText) * 1000,
    startWait: { timeoutMs: startWait * 1000, maxHeld: startWaitMax },
    limits: {
      ...optionalNumber(e.TARMAC_SANDBOX_DISK_MB, 'TARMAC_SANDBOX_DISK_MB', 'defaultDiskMB', {
        min: 64,
        integer: true,
      }),
      ...optionalNumber(e.TARMAC_SANDBOX_NOFILE, 'TARMAC_SANDBOX_NOFILE', 'nofileLimit', {
        min: 64,
        integer: true,
      }),
      ...optionalNumber(e.TARMAC_MEMORY_OVERCOMMIT, 'TARMAC_MEMORY_OVERCOMMIT', 'memoryOvercommit', {
        min: 0.01,
        integer: false,
      }),
    },
    standbyAfterMs: standbySeconds * 1000,
    ...(minAgeSeconds !== undefined ? { standbyMinAgeMs: minAgeSeconds * 1000 } : {}),
    imageDir: e.TARMAC_IMAGE_DIR,
    maxImageArchiveBytes: megabytes(e.TARMAC_IMAGE_MAX_ARCHIVE_MB, 'TARMAC_IMAGE_MAX_ARCHIVE_MB'),
    network: {
      ...(e.TARMAC_BRIDGE ? { bridge: e.TARMAC_BRIDGE } : {}),
      ...(e.TARMAC_SUBNET ? { subnet: e.TARMAC_SUBNET } : {}),
    },
    sandboxDomain: e.TARMAC_DOMAIN ?? 'localhost',
    sandboxdBundle: e.TARMAC_SANDBOXD_BUNDLE,
    tiniBinary: e.TARMAC_TINI ?? '/usr/bin/tini-static',
  };
}
