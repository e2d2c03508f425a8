// LocalEngine: sandboxes as runc containers on this host. All state lives on disk (sandbox
// files, runc state, cgroups, mounts, netns), so any number of engine instances, including one in
// a new platform process after a crash, see the same sandboxes: nothing is held only in memory.
import { closeSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DiskPool } from './disk-pool.js';
import { DEFAULT_MEMORY_OVERCOMMIT, MemoryLedger, memoryCapacityMB } from './capacity.js';
import { Cgroups, detectCgroupVersion, type CgroupVersion } from './cgroups.js';
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
import { EngineError, SandboxExistsError, SandboxNotFoundError, VolumeInUseError } from './errors.js';
import { waitForHealth } from './health.js';
import type { BaseImageOptions } from './images/base-image.js';
import { ImageStore } from './images/image-store.js';
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from './images/import-limits.js';
import { isMountPoint } from './mounts.js';
import { BridgeNetwork, type NetworkConfig } from './network.js';
import { CPU_PERIOD_US, DEFAULT_NOFILE_LIMIT, cpuQuota, sandboxOciSpec, type OciMount } from './oci-spec.js';
import { Runc } from './runc.js';
import { DEFAULT_PATH, ProcessRunner, type CommandRunner, type RunResult } from './runner.js';
import { HostnameSetters } from './hostname-setters.js';
import {
  BOOT_ENV_PATH,
  bootEnv,
  bootEnvArgs,
  bootEnvFile,
  claimedBootEnv,
  readBootEnv,
  writeBootEnv,
} from './boot-env.js';
import { RunMounts } from './run-mounts.js';
import { RuntimeBuilder, sandboxArgs, IN_SANDBOX, type RuntimeSources } from './runtime-dir.js';
import { execEnvArgs, sandboxdProcessEnv } from './sandboxd-env.js';
import { SandboxFiles, type SandboxRecord } from './sandbox-files.js';
import { DEFAULT_DISK_MB, diskPaths, mountSandboxRoot, releaseSandboxDisk } from './sandbox-disk.js';
import { describeSandbox } from './sandbox-status.js';
import { commandArgs, mergeEnv, validate } from './spec.js';
import { commandContainerArgs, exitCodeFromLog } from './command-exit.js';
import { DEFAULT_ID_RANGE, ShiftedLayers, shiftedLayersDir, type IdRange } from './userns.js';
import { VolumeStore } from './volumes.js';
import { SnapshotStore } from './snapshots.js';

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

/** Host files bind-mounted into a sandbox: read-only, nothing to run or open as a device. */
const RO_FILE = ['bind', 'ro', 'nosuid', 'nodev', 'noexec'];

export const DEFAULT_NETWORK: NetworkConfig = { bridge: 'tarmac0', subnet: '10.200.0.0/16' };

export class LocalEngine implements Engine {
  readonly images: ImageStore;
  readonly network: BridgeNetwork;
  readonly runc: Runc;
  private readonly volumeStore: VolumeStore;
  private readonly files: SandboxFiles;
  private readonly runtime: RuntimeBuilder;
  private readonly runner: CommandRunner;
  private readonly clock: Clock;
  private cgroupsCache: Cgroups | undefined;
  private readonly cgroupOf = new Map<string, string>();
  private readonly idRange: IdRange;
  private readonly shifted: ShiftedLayers;
  private ledgerCache: MemoryLedger | undefined;
  private readonly runMounts: RunMounts;
  private readonly diskPool: DiskPool;
  private readonly snapshots: SnapshotStore;
  private readonly hostnames = new HostnameSetters({ PATH: DEFAULT_PATH });

  constructor(private readonly opts: LocalEngineOptions) {
    this.runner = opts.runner ?? new ProcessRunner();
    this.clock = opts.clock ?? systemClock;
    this.images = new ImageStore(
      opts.imageDir ?? join(opts.home, 'images'),
      this.runner,
      this.clock,
      opts.baseImage,
      { ...DEFAULT_IMPORT_LIMITS, ...opts.importLimits },
    );
    this.idRange = opts.idRange ?? DEFAULT_ID_RANGE;
    this.shifted = new ShiftedLayers(
      shiftedLayersDir(opts.imageDir ?? join(opts.home, 'images'), this.idRange),
      this.idRange,
      this.runner,
    );
    this.diskPool = new DiskPool(join(opts.home, 'disk-pool'), this.runner);
    this.snapshots = new SnapshotStore(join(opts.home, 'snapshots'), this.runner);
    this.volumeStore = new VolumeStore(join(opts.home, 'volumes'), this.runner, this.clock, this.idRange);
    this.files = new SandboxFiles(join(opts.home, 'sandboxes'));
    this.runtime = new RuntimeBuilder(opts.runtime, join(opts.home, 'runtime'), this.runner);
    const net = { ...DEFAULT_NETWORK, ...opts.network };
    const runcRoot = opts.runcRoot ?? '/run/tarmac/runc';
    // Leases live next to runc's state, not under home: every engine on the host that shares the
    // bridge (several platforms with their own homes, tests) must see the same leases, and like
    // runc's state they mean nothing after a reboot (tmpfs).
    this.network = new BridgeNetwork(net, this.runner, join(dirname(runcRoot), 'net', net.bridge, 'leases'));
    this.runc = new Runc(this.runner, runcRoot, opts.runcBinary);
    this.runMounts = new RunMounts(dirname(runcRoot), this.runner);
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

  /** Memory limits of sandboxes whose init is alive (stopped ones hold no memory). */
  private liveMemory(): Map<string, number> {
    const out = new Map<string, number>();
    for (const id of this.files.ids()) {
      try {
        const rec = this.files.read(id);
        if (this.runc.alive(id)) out.set(id, rec.memoryMB);
      } catch (err) {
        if (!(err instanceof SandboxNotFoundError)) throw err;
      }
    }
    return out;
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
    const release = this.ledger.reserve(spec.id, spec.memoryMB, this.liveMemory());
    try {
      return await this.create(spec);
    } finally {
      release();
    }
  }

  private async create(spec: SandboxSpec): Promise<SandboxInfo> {
    const image = this.images.resolve(spec.image);
    // Lowers owned by the sandbox's ids (userns.ts): made once per image layer, then a stat.
    const [runtime, lowerDirs] = await Promise.all([
      this.runtime.ensure(),
      this.shifted.layers(image.layerDirs),
    ]);
    const volumeMounts: OciMount[] = [];
    for (const v of spec.volumes ?? []) {
      this.assertVolumeFree(v.volume, spec.id);
      const vol = await this.volumeStore.ensureMounted(v.volume);
      const opts = ['rbind', 'nosuid', 'nodev', v.readOnly ? 'ro' : 'rw'];
      volumeMounts.push({ destination: v.mountPath, type: 'bind', source: vol.path, options: opts });
    }
    if (!this.files.claim(spec.id)) throw new SandboxExistsError(spec.id);
    const paths = this.files.layout(spec.id);
    let ip: string | null = null;
    try {
      for (const d of [paths.bundle, join(paths.root, 'logs')]) mkdirSync(d, { recursive: true });
      const diskMB = spec.diskMB ?? this.opts.defaultDiskMB ?? DEFAULT_DISK_MB;
      // The root (sandbox disk + overlay) and the netns wiring are independent spawns: run them
      // together (the create path's latency, ARCHITECTURE.md "Start-up"). Settled both, so a
      // failure of one still lets teardown release what the other made (the address lease).
      // overlayfs lists lowers top first; image layers are stored bottom first.
      const [mounted, attached] = await Promise.allSettled([
        mountSandboxRoot(
          this.runner,
          this.diskPool,
          { root: paths.root, rootfs: this.runMounts.rootfs(spec.id) },
          [...lowerDirs].reverse(),
          diskMB,
          this.idRange,
          spec.fromSnapshot ? this.snapshots.upperOf(spec.fromSnapshot) : '',
        ),
        this.network.attach(spec.id).then(async (net) => {
          await this.runMounts.prepareNetns(spec.id, net.netnsPath);
          return net;
        }),
      ]);
      if (attached.status === 'fulfilled') ip = attached.value.ip;
      if (mounted.status === 'rejected') throw mounted.reason;
      if (attached.status === 'rejected') throw attached.reason;
      const net = attached.value;
      const cgroup = `${this.opts.cgroupParent ?? 'tarmac'}/${spec.id}`;
      const record: SandboxRecord = {
        id: spec.id,
        image: image.ref,
        layerDirs: image.layerDirs,
        ip: net.ip,
        createdAt: this.clock.date().toISOString(),
        memoryMB: spec.memoryMB,
        pidsLimit: spec.pidsLimit ?? this.opts.defaultPidsLimit ?? 1024,
        diskMB,
        ports: spec.ports ?? [],
        volumes: spec.volumes ?? [],
        labels: spec.labels ?? {},
        cgroup,
        ...(spec.command ? { command: true } : {}),
      };
      this.files.write(record);
      const hostname = spec.hostname ?? spec.id;
      const command = spec.command ? commandArgs(spec.command, image) : undefined;
      // A command container (job task) runs with the env as given; a sandbox's own env is its boot
      // file's, not its init's (boot-env.ts).
      const env = mergeEnv(image.env, command ? { HOSTNAME: hostname, ...spec.env } : {});
      const boot = bootEnvFile(paths.root);
      if (!command) writeBootEnv(boot, bootEnv(hostname, spec.env ?? {}), this.idRange);
      const oci = sandboxOciSpec({
        rootfs: this.runMounts.rootfs(spec.id),
        sysfs: this.runMounts.sysfs(spec.id),
        // A command container (job task) runs the program under tini, with the env as given.
        args: command ? commandContainerArgs(runtime, command) : sandboxArgs(runtime),
        env: command ? env : sandboxdProcessEnv(env),
        cwd: image.workingDir,
        hostname,
        cgroupsPath: `/${cgroup}`,
        memoryMB: record.memoryMB,
        pidsLimit: record.pidsLimit,
        nofileLimit: this.opts.nofileLimit ?? DEFAULT_NOFILE_LIMIT,
        idRange: this.idRange,
        extraMounts: [
          {
            destination: IN_SANDBOX.dir,
            type: 'bind',
            source: runtime.hostPath,
            options: ['rbind', 'ro', 'nosuid', 'nodev'],
          },
          ...(command ? [] : [{ destination: BOOT_ENV_PATH, type: 'bind', source: boot, options: RO_FILE }]),
          ...volumeMounts,
          ...(spec.files ?? []).map((f) => ({
            destination: f.containerPath,
            type: 'bind',
            source: f.hostPath,
            options: RO_FILE,
          })),
        ],
      });
      writeFileSync(join(paths.bundle, 'config.json'), JSON.stringify(oci));
      await this.runc.run(spec.id, paths.bundle, paths.log, net.netnsPath);
      return this.info(record);
    } catch (err) {
      await this.teardown(spec.id, ip, false).catch(() => undefined);
      throw err;
    }
  }

  async waitReady(id: string, timeoutMs = 10_000): Promise<void> {
    const rec = this.files.read(id);
    try {
      await waitForHealth(`http://${rec.ip}:8080/health`, timeoutMs, this.clock, () => {
        if (!this.runc.alive(id)) {
          // The log's tail says why (a crash of sandboxd, a bad image): worth an event's message.
          throw new EngineError(`sandbox ${id} exited before it became ready: ${this.logTail(id)}`);
        }
      });
    } finally {
      // Format the next sandbox's disk now that this one has started (disk-pool.ts): not during
      // its start, where mkfs would compete with runc and sandboxd for the CPU.
      this.diskPool.fill(this.opts.defaultDiskMB ?? DEFAULT_DISK_MB);
    }
  }

  /**
   * The warm pool's claim (issue 20): a sandbox booted ahead of demand takes the hostname and
   * labels of the sandbox it becomes. The hostname is set in the container's UTS namespace from
   * the host (`nsenter --uts`): the sandbox holds no CAP_SYS_ADMIN to do it itself, and `uname -n`
   * inside must read what a sandbox booted with that hostname reads. The labels are what the
   * platform's orphan reaper and workspace deletion go by.
   */
  async claim(
    id: string,
    o: { hostname: string; labels: Record<string, string>; env: Record<string, string> },
  ): Promise<void> {
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(o.hostname)) {
      throw new EngineError(`invalid hostname "${o.hostname}"`);
    }
    const rec = this.files.read(id);
    const pid = this.runc.alive(id)?.pid;
    if (pid === undefined) throw new EngineError(`sandbox ${id} is not running`);
    // Before the first await: the file is the claimed one by the time this call returns.
    const boot = bootEnvFile(this.files.layout(id).root);
    writeBootEnv(boot, claimedBootEnv(readBootEnv(boot), o.hostname, o.env), this.idRange);
    if (!(await this.hostnames.set(id, o.hostname))) {
      const args = [`--target=${pid}`, '--uts', '--', 'hostname', o.hostname];
      await this.runner.run('nsenter', args, { timeoutMs: 5000 });
    }
    this.files.write({ ...rec, labels: o.labels });
  }

  /** Readies `claim`'s hostname change (hostname-setters.ts): the pool calls it once booted. */
  prepareClaim(id: string): void {
    const pid = this.runc.alive(id)?.pid;
    if (pid !== undefined) this.hostnames.prepare(id, pid);
  }

  async freeze(id: string): Promise<void> {
    const rec = this.files.read(id);
    await this.cgroups.freeze(rec.cgroup);
  }

  /**
   * A filesystem snapshot of a sandbox: its writable layer and its volumes' contents, copied while
   * its cgroup is frozen so the copy is consistent (snapshots.ts). A sandbox frozen already (in
   * STANDBY) stays frozen; one that ran is thawed after the copy. Process memory is not copied.
   */
  async snapshotSandbox(id: string, snapshotId: string): Promise<{ sizeBytes: number }> {
    const rec = this.files.read(id);
    const volumes = this.volumeStore.list();
    const source = {
      upper: diskPaths(this.files.layout(id).root).upper,
      volumes: rec.volumes.map((v) => {
        const vol = volumes.find((x) => x.name === v.volume);
        if (!vol) throw new EngineError(`volume ${v.volume} of sandbox ${id} is not allocated`);
        return { path: vol.path, mountPath: v.mountPath };
      }),
    };
    const wasFrozen = this.cgroups.isFrozen(rec.cgroup);
    if (!wasFrozen) await this.cgroups.freeze(rec.cgroup);
    try {
      return { sizeBytes: await this.snapshots.take(snapshotId, source) };
    } finally {
      if (!wasFrozen) this.cgroups.thaw(rec.cgroup);
    }
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
    if (rec.memoryMB === memoryMB) return this.info(rec);
    validate({ id, image: rec.image, memoryMB });
    if (!this.runc.alive(id)) throw new EngineError(`sandbox ${id} is not running`);
    this.ledger.check(id, memoryMB, this.liveMemory());
    await this.runc.update(id, {
      memoryBytes: memoryMB * 1024 * 1024,
      cpuQuota: cpuQuota(memoryMB),
      cpuPeriod: CPU_PERIOD_US,
    });
    // The record is what a re-attaching engine reports: it must show the limit now in force.
    const next = { ...rec, memoryMB };
    this.files.write(next);
    return this.info(next);
  }

  async stopSandbox(id: string, graceSeconds: number): Promise<SandboxInfo> {
    const rec = this.files.read(id);
    if (this.runc.alive(id)) {
      const oomBefore = this.cgroups.oomKills(rec.cgroup) ?? 0;
      // Frozen tasks cannot act on SIGTERM; thaw so the grace period means something.
      if (this.cgroups.exists(rec.cgroup) && this.cgroups.isFrozen(rec.cgroup)) this.cgroups.thaw(rec.cgroup);
      await this.runc.killAll(id, 'TERM');
      let exitCode = 143;
      if (!(await this.waitDead(id, graceSeconds * 1000))) {
        await this.runc.killAll(id, 'KILL');
        exitCode = 137;
        await this.waitDead(id, 5000);
      }
      const oom = (this.cgroups.oomKills(rec.cgroup) ?? 0) > oomBefore;
      this.files.writeStop(id, { reason: 'stopped', exitCode, oomKilled: oom });
    }
    return this.inspect(id);
  }

  async deleteSandbox(id: string, opts: DeleteOptions = {}): Promise<void> {
    const rec = this.files.read(id);
    this.hostnames.drop(id);
    if (this.runc.alive(id)) await this.stopSandbox(id, 0);
    await this.teardown(id, rec.ip, opts.keepUpper ?? false);
    this.cgroupOf.delete(id);
  }

  async list(): Promise<SandboxInfo[]> {
    const out: SandboxInfo[] = [];
    for (const id of this.files.ids()) {
      try {
        out.push(this.info(this.files.read(id)));
      } catch (err) {
        if (!(err instanceof SandboxNotFoundError)) throw err; // deleted meanwhile
      }
    }
    return out;
  }

  async inspect(id: string): Promise<SandboxInfo> {
    return this.info(this.files.read(id));
  }

  async readLog(id: string, offset: number, maxBytes: number): Promise<{ text: string; next: number }> {
    const path = this.files.layout(id).log;
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      return { text: '', next: offset };
    }
    const start = Math.max(offset, size - maxBytes, 0);
    const length = Math.max(0, size - start);
    if (length === 0) return { text: '', next: size };
    const buf = Buffer.alloc(length);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buf, 0, length, start);
    } finally {
      closeSync(fd);
    }
    return { text: buf.toString('utf8'), next: size };
  }

  /** Runs a command inside a running sandbox (debugging and tests; not part of Engine). */
  exec(id: string, args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
    this.files.read(id);
    const pid = this.runc.alive(id)?.pid;
    if (pid === undefined) throw new EngineError(`sandbox ${id} is not running`);
    const oci = JSON.parse(readFileSync(join(this.files.layout(id).bundle, 'config.json'), 'utf8')) as {
      process?: { env?: string[] };
    };
    // In the network namespace of the container's init (Runc.run: it is not in the config).
    return this.runc.exec(id, args, {
      ...opts,
      envArgs: [
        ...execEnvArgs(oci.process?.env ?? []),
        ...bootEnvArgs(readBootEnv(bootEnvFile(this.files.layout(id).root))),
      ],
      netnsPath: `/proc/${pid}/ns/net`,
    });
  }

  createVolume(name: string, sizeMB: number): Promise<VolumeInfo> {
    return this.volumeStore.create(name, sizeMB);
  }

  growVolume(name: string, sizeMB: number): Promise<VolumeInfo> {
    let detached = true;
    try {
      this.assertVolumeFree(name, null);
    } catch (err) {
      if (!(err instanceof VolumeInUseError)) throw err;
      detached = false;
    }
    return this.volumeStore.grow(name, sizeMB, detached);
  }

  async deleteVolume(name: string): Promise<void> {
    this.assertVolumeFree(name, null);
    await this.volumeStore.remove(name);
  }

  async listVolumes(): Promise<VolumeInfo[]> {
    return this.volumeStore.list();
  }

  /** What a deleted sandbox left behind (mounts, cgroups, netns, veth, lease, files); [] is clean. */
  async leftovers(id: string, ip: string): Promise<string[]> {
    const paths = this.files.layout(id);
    const left = [...(await this.network.leftovers(id, ip))];
    left.push(...this.runMounts.leftovers(id, paths.rootfs).map((m) => `mount ${m}`));
    if (isMountPoint(diskPaths(paths.root).mnt)) left.push(`mount ${diskPaths(paths.root).mnt}`);
    left.push(
      ...this.cgroups.present(`${this.opts.cgroupParent ?? 'tarmac'}/${id}`).map((d) => `cgroup ${d}`),
    );
    if (this.runc.state(id)) left.push(`runc state ${id}`);
    return left;
  }

  private info(rec: SandboxRecord): SandboxInfo {
    const live = this.runc.alive(rec.id);
    let stop = this.files.readStop(rec.id);
    // A command container that ended by itself: its wrapper wrote the exit code last in its log.
    if (!live && !stop && rec.command) {
      const code = exitCodeFromLog(this.logTail(rec.id, 256));
      if (code !== null) stop = { reason: 'exited', exitCode: code, oomKilled: false };
    }
    return describeSandbox(rec, {
      pid: live?.pid ?? null,
      frozen: live !== null && this.cgroups.isFrozen(rec.cgroup),
      oomKills: this.cgroups.oomKills(rec.cgroup),
      stop,
    });
  }

  private logTail(id: string, bytes = 600): string {
    try {
      const text = readFileSync(this.files.layout(id).log, 'utf8');
      return text.slice(-bytes).trim() || '(no output)';
    } catch {
      return '(no log)';
    }
  }

  private async waitDead(id: string, ms: number): Promise<boolean> {
    const deadline = this.clock.now() + ms;
    while (this.runc.alive(id)) {
      if (this.clock.now() >= deadline) return false;
      await this.clock.sleep(10);
    }
    return true;
  }

  private async teardown(id: string, ip: string | null, keepUpper: boolean): Promise<void> {
    const paths = this.files.layout(id);
    await this.runc.delete(id);
    await this.runMounts.release(id, paths.rootfs);
    await releaseSandboxDisk(this.runner, paths.root, keepUpper);
    await this.network.detach(id, ip);
    this.cgroups.remove(`${this.opts.cgroupParent ?? 'tarmac'}/${id}`);
    if (keepUpper) {
      for (const p of [
        paths.bundle,
        paths.work,
        diskPaths(paths.root).image,
        diskPaths(paths.root).mnt,
        join(paths.root, 'sandbox.json'),
        join(paths.root, 'stopped.json'),
        bootEnvFile(paths.root), // the sandbox's envs, secret ones too: never outlive it
      ]) {
        rmSync(p, { recursive: true, force: true });
      }
    } else {
      rmSync(paths.root, { recursive: true, force: true });
    }
  }

  /** A volume is attached to one sandbox at a time. */
  private assertVolumeFree(volume: string, forId: string | null): void {
    for (const id of this.files.ids()) {
      if (id === forId) continue;
      try {
        if (this.files.read(id).volumes.some((v) => v.volume === volume)) {
          throw new VolumeInUseError(`volume ${volume} is attached to sandbox ${id}`);
        }
      } catch (err) {
        if (!(err instanceof SandboxNotFoundError)) throw err;
      }
    }
  }
}
