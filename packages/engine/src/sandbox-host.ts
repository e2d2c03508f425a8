// What LocalEngine's sandbox steps share (sandbox-create.ts, sandbox-teardown.ts, …): the
// engine's collaborators, passed as one argument so each step module takes its dependencies
// rather than reaching into the engine.
import type { Cgroups } from './cgroups.js';
import type { Clock } from './clock.js';
import type { DiskPool } from './disk-pool.js';
import type { HostnameSetters } from './hostname-setters.js';
import type { ImageStore } from './images/image-store.js';
import type { LocalEngineOptions } from './local-engine-options.js';
import type { BridgeNetwork } from './network.js';
import type { Runc } from './runc.js';
import type { CommandRunner } from './runner.js';
import type { BundleDirs } from './bundle-dirs.js';
import type { RunMounts } from './run-mounts.js';
import type { RuntimeBuilder } from './runtime-dir.js';
import type { SandboxFiles } from './sandbox-files.js';
import type { SnapshotStore } from './snapshots.js';
import type { IdRange, ShiftedLayers } from './userns.js';
import type { VolumeStore } from './volumes.js';

export interface SandboxHost {
  readonly opts: LocalEngineOptions;
  readonly images: ImageStore;
  readonly network: BridgeNetwork;
  readonly runc: Runc;
  readonly volumeStore: VolumeStore;
  readonly files: SandboxFiles;
  readonly runtime: RuntimeBuilder;
  readonly runner: CommandRunner;
  readonly clock: Clock;
  /** Detected on first use (LocalEngine.cgroups): a getter, not read at construction. */
  readonly cgroups: Cgroups;
  readonly idRange: IdRange;
  readonly shifted: ShiftedLayers;
  readonly runMounts: RunMounts;
  /** Each sandbox's runc bundle and boot env, on tmpfs: its secrets (bundle-dirs.ts). */
  readonly bundles: BundleDirs;
  readonly diskPool: DiskPool;
  readonly snapshots: SnapshotStore;
  readonly hostnames: HostnameSetters;
}
