// What LocalEngine is built from (local-engine.ts): every dependency is an option, nothing is
// read from the environment here.
import type { BaseImageOptions } from './images/base-image.js';
import type { ImportLimits } from './images/import-limits.js';
import type { CgroupVersion } from './cgroups.js';
import type { Clock } from './clock.js';
import type { NetworkConfig } from './network.js';
import type { CommandRunner } from './runner.js';
import type { RuntimeSources } from './runtime-dir.js';
import type { IdRange } from './userns.js';

export interface LocalEngineOptions {
  /** TARMAC_HOME: images/, sandboxes/, volumes/, runtime/ live here. */
  home: string;
  /**
   * Image store dir (default <home>/images). Several homes may share one (tests point every
   * platform at one cache so only the first start builds the base image).
   */
  imageDir?: string;
  runtime: RuntimeSources;
  network?: Partial<NetworkConfig>;
  /** Parent cgroup of all sandboxes (relative to the hierarchy root). */
  cgroupParent?: string;
  runcRoot?: string;
  runcBinary?: string;
  runner?: CommandRunner;
  clock?: Clock;
  cgroupRoot?: string;
  cgroupVersion?: CgroupVersion;
  baseImage?: BaseImageOptions;
  /** Bounds on one image import (defaults: DEFAULT_IMPORT_LIMITS, images/import-limits.ts). */
  importLimits?: Partial<ImportLimits>;
  defaultPidsLimit?: number;
  /** Each sandbox's writable layer, MB, unless its spec says (default DEFAULT_DISK_MB, 4 GiB). */
  defaultDiskMB?: number;
  /** RLIMIT_NOFILE of sandbox processes (default DEFAULT_NOFILE_LIMIT). */
  nofileLimit?: number;
  /** Host ids root..n in sandboxes map to (default DEFAULT_ID_RANGE). */
  idRange?: IdRange;
  /** The host's memory in MB (default: os.totalmem()). */
  hostMemoryMB?: number;
  /** Live sandboxes' memory limits may sum to hostMemoryMB times this (default 1). */
  memoryOvercommit?: number;
}
