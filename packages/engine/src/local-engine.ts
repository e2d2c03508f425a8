// LocalEngine: sandboxes as runc containers on this host. All state lives on disk (sandbox
// files, runc state, cgroups, mounts, netns), so any number of engine instances, including one in
// a new platform process after a crash, see the same sandboxes: nothing is held only in memory.
// The class is a façade: each step of a sandbox's life is a module taking the engine's
// collaborators (sandbox-host.ts) as an argument.
import { totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { DiskPool } from './disk-pool.js';
import { DEFAULT_MEMORY_OVERCOMMIT, MemoryLedger, memoryCapacityMB } from './capacity.js';
import { Cgroups, detectCgroupVersion } from './cgroups.js';
import { systemClock, type Clock } from './clock.js';
import type {
  DeleteOptions,
  Engine,
  ImageInfo,
  SandboxInfo,
  SandboxSpec,
  SandboxStats,
  VolumeInfo,
} from './engine.js';
import { EngineError } from './errors.js';
import { waitForHealth } from './health.js';
import { ImageStore } from './images/image-store.js';
import { DEFAULT_IMPORT_LIMITS } from './images/import-limits.js';
import type { LocalEngineOptions } from './local-engine-options.js';
import { BridgeNetwork, type NetworkConfig } from './network.js';
import { CPU_PERIOD_US, cpuQuota } from './oci-spec.js';
import { Runc } from './runc.js';
import { DEFAULT_PATH, ProcessRunner, type RunResult } from './runner.js';
import { HostnameSetters } from './hostname-setters.js';
import { BundleDirs } from './bundle-dirs.js';
import { RunMounts } from './run-mounts.js';
import { RuntimeBuilder } from './runtime-dir.js';
import { SandboxFiles } from './sandbox-files.js';
import { claimSandbox, prepareClaim } from './sandbox-claim.js';
import { createSandboxOnHost } from './sandbox-create.js';
import { DEFAULT_DISK_MB } from './sandbox-disk.js';
import { execInSandbox } from './sandbox-exec.js';
import type { SandboxHost } from './sandbox-host.js';
import { listSandboxes, liveMemory, logTail, readSandboxLog, sandboxInfo } from './sandbox-info.js';
import { snapshotSandbox } from './sandbox-snapshot.js';
import { sandboxLeftovers, stopSandbox, teardownSandbox } from './sandbox-teardown.js';
import { validate } from './spec.js';
import { DEFAULT_ID_RANGE, ShiftedLayers, shiftedLayersDir } from './userns.js';
import { VolumeStore } from './volumes.js';
import { deleteVolume, growVolume } from './volume-attachments.js';
import { SnapshotStore } from './snapshots.js';

export type { LocalEngineOptions } from './local-engine-options.js';

export const DEFAULT_NETWORK: NetworkConfig = { bridge: 'tarmac0', subnet: '10.200.0.0/16' };

export class LocalEngine implements Engine {
  readonly images: ImageStore;
  readonly network: BridgeNetwork;
  readonly runc: Runc;
  private readonly volumeStore: VolumeStore;
  private readonly files: SandboxFiles;
  private readonly clock: Clock;
  private cgroupsCache: Cgroups | undefined;
  private readonly cgroupOf = new Map<string, string>();
  private ledgerCache: MemoryLedger | undefined;
  private readonly diskPool: DiskPool;
  private readonly snapshots: SnapshotStore;
  private readonly hostnames = new HostnameSetters({ PATH: DEFAULT_PATH });
  /** What the step modules (sandbox-*.ts) are given: this engine's collaborators. */
  private readonly host: SandboxHost;

  constructor(private readonly opts: LocalEngineOptions) {
    const runner = opts.runner ?? new ProcessRunner();
    this.clock = opts.clock ?? systemClock;
    this.images = new ImageStore(
      opts.imageDir ?? join(opts.home, 'images'),
      runner,
      this.clock,
      opts.baseImage,
      { ...DEFAULT_IMPORT_LIMITS, ...opts.importLimits },
    );
    const idRange = opts.idRange ?? DEFAULT_ID_RANGE;
    const shifted = new ShiftedLayers(
      shiftedLayersDir(opts.imageDir ?? join(opts.home, 'images'), idRange),
      idRange,
      runner,
    );
    this.diskPool = new DiskPool(join(opts.home, 'disk-pool'), runner);
    this.snapshots = new SnapshotStore(join(opts.home, 'snapshots'), runner);
    this.volumeStore = new VolumeStore(join(opts.home, 'volumes'), runner, this.clock, idRange);
    this.files = new SandboxFiles(join(opts.home, 'sandboxes'));
    const runtime = new RuntimeBuilder(opts.runtime, join(opts.home, 'runtime'), runner);
    const net = { ...DEFAULT_NETWORK, ...opts.network };
    const runcRoot = opts.runcRoot ?? '/run/tarmac/runc';
    // Leases live next to runc's state, not under home: every engine on the host that shares the
    // bridge (several platforms with their own homes, tests) must see the same leases, and like
    // runc's state they mean nothing after a reboot (tmpfs).
    this.network = new BridgeNetwork(net, runner, join(dirname(runcRoot), 'net', net.bridge, 'leases'));
    this.runc = new Runc(runner, runcRoot, opts.runcBinary);
    const cgroups = (): Cgroups => this.cgroups; // still detected on first use
    this.host = {
      opts,
      images: this.images,
      network: this.network,
      runc: this.runc,
      volumeStore: this.volumeStore,
      files: this.files,
      runtime,
      runner,
      clock: this.clock,
      get cgroups() {
        return cgroups();
      },
      idRange,
      shifted,
      runMounts: new RunMounts(dirname(runcRoot), runner),
      bundles: new BundleDirs(dirname(runcRoot), runner),
      diskPool: this.diskPool,
      snapshots: this.snapshots,
      hostnames: this.hostnames,
    };
  }

  /** Detected on first use, not at construction (no I/O in constructors). */
  get cgroups(): Cgroups {
    this.cgroupsCache ??= new Cgroups(
      this.opts.cgroupVersion ?? detectCgroupVersion(this.opts.cgroupRoot),
      this.clock,
      this.opts.cgroupRoot,
    );
    return this.cgroupsCache;
  }

  /**
   * Memory (MB) this engine commits to sandboxes at most: the host's memory times the overcommit
   * ratio. A sandbox asking for more can never run here (the API refuses it up front); the sum
   * of live sandboxes' limits is held to it at create and resize (InsufficientCapacityError).
   */
  get memoryCapacityMB(): number {
    return this.ledger.capacityMB;
  }

  private get ledger(): MemoryLedger {
    this.ledgerCache ??= new MemoryLedger(
      memoryCapacityMB(
        this.opts.hostMemoryMB ?? Math.floor(totalmem() / 1024 / 1024),
        this.opts.memoryOvercommit ?? DEFAULT_MEMORY_OVERCOMMIT,
      ),
    );
    return this.ledgerCache;
  }

  ensureImage(ref: string): Promise<ImageInfo> {
    return this.images.ensure(ref);
  }

  hasImage(ref: string): boolean {
    return this.images.present(ref);
  }

  importImage(tarPath: string, ref: string): Promise<ImageInfo> {
    return this.images.import(tarPath, ref);
  }

  async createSandbox(spec: SandboxSpec): Promise<SandboxInfo> {
    validate(spec);
    await this.images.ensure(spec.image); // ImageNotFoundError before anything is allocated
    const release = this.ledger.reserve(spec.id, spec.memoryMB, liveMemory(this.host));
    try {
      return await createSandboxOnHost(this.host, spec);
    } finally {
      release();
    }
  }

  async waitReady(id: string, timeoutMs = 10_000): Promise<void> {
    const rec = this.files.read(id);
    try {
      await waitForHealth(`http://${rec.ip}:8080/health`, timeoutMs, this.clock, () => {
        if (!this.runc.alive(id)) {
          // The log's tail says why (a crash of sandboxd, a bad image): worth an event's message.
          throw new EngineError(`sandbox ${id} exited before it became ready: ${logTail(this.host, id)}`);
        }
      });
    } finally {
      // Format the next sandbox's disk now that this one has started (disk-pool.ts): not during
      // its start, where mkfs would compete with runc and sandboxd for the CPU.
      this.diskPool.fill(this.opts.defaultDiskMB ?? DEFAULT_DISK_MB);
    }
  }

  /** The warm pool's claim (issue 20): hostname, boot env and labels (sandbox-claim.ts). */
  claim(
    id: string,
    o: { hostname: string; labels: Record<string, string>; env: Record<string, string> },
  ): Promise<void> {
    return claimSandbox(this.host, id, o);
  }

  /** Readies `claim`'s hostname change and relabels the sandbox ready (sandbox-claim.ts). */
  prepareClaim(id: string, labels?: Record<string, string>): void {
    prepareClaim(this.host, id, labels);
  }

  async freeze(id: string): Promise<void> {
    const rec = this.files.read(id);
    await this.cgroups.freeze(rec.cgroup);
  }

  /** A filesystem snapshot, taken with the sandbox frozen (sandbox-snapshot.ts). */
  snapshotSandbox(id: string, snapshotId: string): Promise<{ sizeBytes: number }> {
    return snapshotSandbox(this.host, id, snapshotId);
  }

  deleteSnapshot(snapshotId: string): void {
    this.snapshots.remove(snapshotId);
  }

  snapshotIds(): string[] {
    return this.snapshots.ids();
  }

  async thaw(id: string): Promise<void> {
    this.thawSync(id);
  }

  /** The resume hot path: one pseudo-file write and one read, no awaits, no JSON. */
  thawSync(id: string): void {
    let cgroup = this.cgroupOf.get(id);
    if (cgroup === undefined) {
      cgroup = this.files.read(id).cgroup;
      this.cgroupOf.set(id, cgroup); // immutable for the sandbox's life; dropped on delete
    }
    this.cgroups.thaw(cgroup);
  }

  /** Ends a startup CPU boost (SandboxSpec.startupCpuCores): back to memoryMB / 2048 cores. */
  endCpuBoost(id: string): void {
    const rec = this.files.read(id);
    this.cgroups.setCpuQuota(rec.cgroup, cpuQuota(rec.memoryMB), CPU_PERIOD_US);
  }

  async stats(id: string): Promise<SandboxStats> {
    const rec = this.files.read(id);
    const s = this.cgroups.stats(rec.cgroup);
    return {
      memoryBytes: s.memoryBytes,
      memoryLimitBytes: s.memoryLimitBytes,
      cpuUsageNs: s.cpuUsageNs,
      pids: s.pids,
      frozen: s.frozen,
      oomKills: s.oomKills,
    };
  }

  async resize(id: string, memoryMB: number): Promise<SandboxInfo> {
    const rec = this.files.read(id);
    if (rec.memoryMB === memoryMB) return sandboxInfo(this.host, rec);
    validate({ id, image: rec.image, memoryMB });
    if (!this.runc.alive(id)) throw new EngineError(`sandbox ${id} is not running`);
    this.ledger.check(id, memoryMB, liveMemory(this.host));
    await this.runc.update(id, {
      memoryBytes: memoryMB * 1024 * 1024,
      cpuQuota: cpuQuota(memoryMB),
      cpuPeriod: CPU_PERIOD_US,
    });
    // The record is what a re-attaching engine reports: it must show the limit now in force.
    const next = { ...rec, memoryMB };
    this.files.write(next);
    return sandboxInfo(this.host, next);
  }

  stopSandbox(id: string, graceSeconds: number): Promise<SandboxInfo> {
    return stopSandbox(this.host, id, graceSeconds);
  }

  async deleteSandbox(id: string, opts: DeleteOptions = {}): Promise<void> {
    const rec = this.files.read(id);
    this.hostnames.drop(id);
    if (this.runc.alive(id)) await this.stopSandbox(id, 0);
    await teardownSandbox(this.host, id, rec.ip, opts.keepUpper ?? false);
    this.cgroupOf.delete(id);
  }

  async list(): Promise<SandboxInfo[]> {
    return listSandboxes(this.host);
  }

  async inspect(id: string): Promise<SandboxInfo> {
    return sandboxInfo(this.host, this.files.read(id));
  }

  async readLog(id: string, offset: number, maxBytes: number): Promise<{ text: string; next: number }> {
    return readSandboxLog(this.host, id, offset, maxBytes);
  }

  /** Runs a command inside a running sandbox (debugging and tests; not part of Engine). */
  exec(id: string, args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
    return execInSandbox(this.host, id, args, opts);
  }

  createVolume(name: string, sizeMB: number): Promise<VolumeInfo> {
    return this.volumeStore.create(name, sizeMB);
  }

  growVolume(name: string, sizeMB: number): Promise<VolumeInfo> {
    return growVolume(this.host, name, sizeMB);
  }

  deleteVolume(name: string): Promise<void> {
    return deleteVolume(this.host, name);
  }

  async listVolumes(): Promise<VolumeInfo[]> {
    return this.volumeStore.list();
  }

  /** What a deleted sandbox left behind (mounts, cgroups, netns, veth, lease, files); [] is clean. */
  leftovers(id: string, ip: string): Promise<string[]> {
    return sandboxLeftovers(this.host, id, ip);
  }
}
