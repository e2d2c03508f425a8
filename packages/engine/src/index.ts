export type {
  HostFile,
  DeleteOptions,
  Engine,
  ImageInfo,
  PortSpec,
  SandboxInfo,
  SandboxSpec,
  SandboxStats,
  SandboxStatus,
  VolumeInfo,
  VolumeMount,
} from './engine.js';
export {
  CommandError,
  EngineError,
  EngineUnavailableError,
  FreezeAbortedError,
  ImageNotFoundError,
  InsufficientCapacityError,
  InvalidImageError,
  InvalidSpecError,
  SandboxExistsError,
  SandboxNotFoundError,
  VolumeExistsError,
  VolumeInUseError,
  VolumeNotFoundError,
  isTransientHostError,
} from './errors.js';
export { LocalEngine, DEFAULT_NETWORK, type LocalEngineOptions } from './local-engine.js';
export { DEFAULT_DISK_MB } from './sandbox-disk.js';
export { DEFAULT_NOFILE_LIMIT } from './oci-spec.js';
export { DEFAULT_MEMORY_OVERCOMMIT } from './capacity.js';
export { DEFAULT_ID_RANGE, type IdRange } from './userns.js';
export type { NetworkConfig } from './network.js';
export type { RuntimeSources } from './runtime-dir.js';
export type { BaseImageOptions } from './images/base-image.js';
export { BASE_IMAGE, normalizeRef, resolveRef } from './images/refs.js';
export { EXIT_MARKER } from './command-exit.js';
export { DEFAULT_IMPORT_LIMITS, type ImportLimits } from './images/import-limits.js';
export { ProcessRunner, type CommandRunner, type RunOptions, type RunResult } from './runner.js';
export { systemClock, type Clock } from './clock.js';
export { detectCgroupVersion, type CgroupVersion } from './cgroups.js';
export { probe, waitForHealth } from './health.js';
export { SnapshotStore, type SnapshotSource } from './snapshots.js';
// The platform's build plane reads uploaded source tarballs with the same vetted reader (issue 15).
export { walkTar, type TarEntry } from './images/tar-entries.js';
