/**
 * Settings of the local engine and the sandbox controllers, from environment variables (main.ts
 * passes `process.env`; nothing here reads it):
 *  - TARMAC_STANDBY_AFTER     idle time before STANDBY: seconds or a duration (`15s`, `2m`); 15 s
 *  - TARMAC_IMAGE_DIR         image store shared between homes (tests: one base-image cache)
 *  - TARMAC_IMAGE_MAX_ARCHIVE_MB   largest image archive POST /v0/images/import takes (16384)
 *  - TARMAC_BRIDGE / TARMAC_SUBNET   sandbox bridge and its IPv4 CIDR (tarmac0, 10.200.0.0/16)
 *  - TARMAC_DOMAIN           domain of host-style sandbox URLs (localhost)
 *  - TARMAC_SANDBOXD_BUNDLE   the sandboxd bundle injected into sandboxes
 *  - TARMAC_TINI              a static tini (/usr/bin/tini-static)
 */
import { lifecycleDurationSeconds } from '@tarmac/contract';

export interface EngineConfig {
  standbyAfterMs: number;
  imageDir: string | undefined;
  /** Undefined: the engine's default (DEFAULT_IMPORT_LIMITS). */
  maxImageArchiveBytes: number | undefined;
  /** allowedHostPorts: set by main.ts to the egress proxy's port (egress/ARCHITECTURE.md). */
  network: { bridge?: string; subnet?: string; allowedHostPorts?: number[] };
  sandboxDomain: string;
  sandboxdBundle: string | undefined;
  tiniBinary: string;
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
    maxImageArchiveBytes: megabytes(env, 'TARMAC_IMAGE_MAX_ARCHIVE_MB'),
    network: {
      ...(env.TARMAC_BRIDGE ? { bridge: env.TARMAC_BRIDGE } : {}),
      ...(env.TARMAC_SUBNET ? { subnet: env.TARMAC_SUBNET } : {}),
    },
    sandboxDomain: env.TARMAC_DOMAIN || 'localhost',
    sandboxdBundle: env.TARMAC_SANDBOXD_BUNDLE || undefined,
    tiniBinary: env.TARMAC_TINI || '/usr/bin/tini-static',
  };
}

function megabytes(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (!text) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new EngineConfigError(`${name} must be a whole number of megabytes, got "${text}"`);
  }
  return Number(text) * 1024 * 1024;
}
