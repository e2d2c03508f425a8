/**
 * Settings of the local engine and the sandbox controllers, from environment variables (main.ts
 * passes `process.env`; nothing here reads it):
 *  - TARMAC_STANDBY_AFTER     idle time before STANDBY: seconds or a duration (`15s`, `2m`); 15 s
 *  - TARMAC_IMAGE_DIR         image store shared between homes (tests: one base-image cache)
 *  - TARMAC_BRIDGE / TARMAC_SUBNET   sandbox bridge and its IPv4 CIDR (tarmac0, 10.200.0.0/16)
 *  - TARMAC_DOMAIN           domain of host-style sandbox URLs (localhost)
 *  - TARMAC_SANDBOXD_BUNDLE   the sandboxd bundle injected into sandboxes
 *  - TARMAC_TINI              a static tini (/usr/bin/tini-static)
 *  - TARMAC_SANDBOX_DISK_MB   each sandbox's writable layer, MB (engine default 4096); writes past
 *                             it fail with ENOSPC inside the sandbox (issue 19 item 5)
 *  - TARMAC_SANDBOX_NOFILE    open files per sandbox process, RLIMIT_NOFILE (engine default 4096)
 *  - TARMAC_MEMORY_OVERCOMMIT live sandboxes' memory limits may sum to the host's memory times
 *                             this (engine default 1: never more than the host has; item 13)
 */
import { lifecycleDurationSeconds } from '@tarmac/contract';

export interface EngineConfig {
  standbyAfterMs: number;
  imageDir: string | undefined;
  /** allowedHostPorts: set by main.ts to the egress proxy's port (egress/ARCHITECTURE.md). */
  network: { bridge?: string; subnet?: string; allowedHostPorts?: number[] };
  sandboxDomain: string;
  sandboxdBundle: string | undefined;
  tiniBinary: string;
  /** Per-sandbox limits, passed to LocalEngine as they are (absent: the engine's defaults). */
  limits: { defaultDiskMB?: number; nofileLimit?: number; memoryOvercommit?: number };
}

export class EngineConfigError extends Error {}

export function engineConfigFrom(env: Record<string, string | undefined>): EngineConfig {
  const standbyText = env.TARMAC_STANDBY_AFTER ?? '15s';
  const standbySeconds = lifecycleDurationSeconds(
    /^\d+$/.test(standbyText) ? `${standbyText}s` : standbyText,
  );
  if (standbySeconds === undefined || standbySeconds < 1) {
    throw new EngineConfigError(
      `TARMAC_STANDBY_AFTER must be seconds or a duration like 15s or 2m, got "${standbyText}"`,
    );
  }
  return {
    standbyAfterMs: standbySeconds * 1000,
    imageDir: env.TARMAC_IMAGE_DIR || undefined,
    network: {
      ...(env.TARMAC_BRIDGE ? { bridge: env.TARMAC_BRIDGE } : {}),
      ...(env.TARMAC_SUBNET ? { subnet: env.TARMAC_SUBNET } : {}),
    },
    sandboxDomain: env.TARMAC_DOMAIN || 'localhost',
    sandboxdBundle: env.TARMAC_SANDBOXD_BUNDLE || undefined,
    tiniBinary: env.TARMAC_TINI || '/usr/bin/tini-static',
    limits: {
      ...optionalNumber(env, 'TARMAC_SANDBOX_DISK_MB', 'defaultDiskMB', { min: 64, integer: true }),
      ...optionalNumber(env, 'TARMAC_SANDBOX_NOFILE', 'nofileLimit', { min: 64, integer: true }),
      ...optionalNumber(env, 'TARMAC_MEMORY_OVERCOMMIT', 'memoryOvercommit', { min: 0.01, integer: false }),
    },
  };
}

function optionalNumber<K extends string>(
  env: Record<string, string | undefined>,
  name: string,
  key: K,
  rule: { min: number; integer: boolean },
): Partial<Record<K, number>> {
  const text = env[name];
  if (text === undefined || text === '') return {};
  const n = Number(text);
  if (!Number.isFinite(n) || n < rule.min || (rule.integer && !Number.isInteger(n))) {
    const what = rule.integer ? 'a whole number' : 'a number';
    throw new EngineConfigError(`${name} must be ${what} of at least ${rule.min}, got "${text}"`);
  }
  return { [key]: n } as Partial<Record<K, number>>;
}
