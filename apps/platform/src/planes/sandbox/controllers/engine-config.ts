/**
 * Settings of the local engine and the sandbox controllers. config.ts (the platform's one env
 * schema) fills them from TARMAC_STANDBY_AFTER, TARMAC_STANDBY_MIN_AGE, TARMAC_IMAGE_DIR, TARMAC_IMAGE_MAX_ARCHIVE_MB, TARMAC_BRIDGE, TARMAC_SUBNET,
 * TARMAC_DOMAIN, TARMAC_SANDBOXD_BUNDLE, TARMAC_TINI and TARMAC_ORPHAN_GRACE_SECONDS; nothing here reads the environment.
 */

import type { PoolShape } from '../pool/pool-shapes.js';

export interface EngineConfig {
  standbyAfterMs: number;
  /** No freeze before this age (TARMAC_STANDBY_MIN_AGE; standby.ts); undefined: its default. */
  standbyMinAgeMs?: number;
  imageDir: string | undefined;
  /** Largest archive POST /v0/images/import takes (TARMAC_IMAGE_MAX_ARCHIVE_MB); undefined: the engine's default. */
  maxImageArchiveBytes: number | undefined;
  /** allowedHostPorts: set by main.ts to the egress proxy's port (egress/ARCHITECTURE.md). */
  network: { bridge?: string; subnet?: string; allowedHostPorts?: number[] };
  sandboxDomain: string;
  sandboxdBundle: string | undefined;
  tiniBinary: string;
  /** Warm pool shapes (TARMAC_POOL; pool/pool-shapes.ts); empty: no pool. */
  pool: PoolShape[];
  /** One member per shape kept thawed (TARMAC_POOL_HOT; pool/hot-members.ts); default true. */
  poolHot?: boolean;
  /** Age before a container with no record is removed (TARMAC_ORPHAN_GRACE_SECONDS; orphan-reaper.ts). */
  orphanGraceMs: number;
  /**
   * Requests to a starting sandbox are held this long, at most maxHeld at once
   * (TARMAC_SANDBOX_START_WAIT_SECONDS, TARMAC_SANDBOX_START_WAIT_MAX; gateway/start-waiters.ts).
   */
  startWait?: { timeoutMs: number; maxHeld: number };
  /** Per-sandbox limits (TARMAC_SANDBOX_DISK_MB, _NOFILE, TARMAC_MEMORY_OVERCOMMIT), to LocalEngine as they are. */
  limits: { defaultDiskMB?: number; nofileLimit?: number; memoryOvercommit?: number };
}
