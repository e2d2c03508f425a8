// The engine interface: what the platform asks of any workload engine (local runc today,
// kubernetes later). Types here are plain data so they cross process and package boundaries.

export type SandboxStatus = 'RUNNING' | 'FROZEN' | 'STOPPED';

export interface PortSpec {
  target: number;
  protocol?: string;
  name?: string;
}

export interface VolumeMount {
  /** Name of a volume made with createVolume. */
  volume: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface SandboxSpec {
  /** Engine id: lowercase alphanumerics and '-', 1..63 chars, unique on this engine. */
  id: string;
  /** Image reference, e.g. `tarmac/base:latest`; aliases are resolved by the image store. */
  image: string;
  /** Hard memory limit in MB; CPU is memoryMB / 2048 cores. */
  memoryMB: number;
  /**
   * CPU cores the container may use until `LocalEngine.endCpuBoost` (when more than memoryMB /
   * 2048): a startup boost, so a small workload boots at full speed (the run plane's replicas).
   */
  startupCpuCores?: number;
  /** Max processes in the sandbox's cgroup (default 1024). */
  pidsLimit?: number;
  /** Size of the sandbox's writable layer in MB (default: the engine's defaultDiskMB). */
  diskMB?: number;
  env?: Record<string, string>;
  hostname?: string;
  ports?: PortSpec[];
  volumes?: VolumeMount[];
  labels?: Record<string, string>;
  /**
   * Host files bind-mounted read-only into the sandbox (e.g. the egress CA bundle over the system
   * trust store, apps/platform/src/planes/sandbox/egress/ARCHITECTURE.md).
   */
  files?: HostFile[];
  /** A snapshot (LocalEngine.snapshotSandbox) whose files the writable layer starts with: a fork. */
  fromSnapshot?: string;
  /**
   * Run this program (under tini) as the container's workload instead of sandboxd: a job task
   * (apps/platform planes/jobs). The container stops when it exits; inspect() then reports its
   * exit code, and its stdout/stderr are in the container's log (readLog). No sandboxd, so
   * waitReady does not apply. `[]` means the image's Entrypoint + Cmd.
   */
  command?: string[];
}

export interface HostFile {
  hostPath: string;
  /** Absolute path inside the sandbox; an existing file there is shadowed. */
  containerPath: string;
}

export interface SandboxInfo {
  id: string;
  image: string;
  status: SandboxStatus;
  /** Address on the platform bridge; sandboxd listens on port 8080 there. */
  ip: string;
  /** Host pid of the sandbox's init while it runs. */
  pid: number | null;
  createdAt: string;
  memoryMB: number;
  ports: PortSpec[];
  volumes: VolumeMount[];
  labels: Record<string, string>;
  /** Set once STOPPED when known: 128+signal for signalled inits, as a shell would report. */
  exitCode: number | null;
  /** The memory cgroup OOM-killed at least one process of this sandbox. */
  oomKilled: boolean;
  /** Processes the memory cgroup OOM-killed so far (0 once the cgroup is gone). */
  oomKills: number;
  /** Why it stopped, when the engine knows: 'stopped' (stopSandbox), 'oom', 'exited'. */
  reason: string | null;
}

export interface SandboxStats {
  memoryBytes: number;
  memoryLimitBytes: number;
  /** Total CPU time consumed, nanoseconds. */
  cpuUsageNs: number;
  pids: number;
  frozen: boolean;
  oomKills: number;
}

export interface ImageInfo {
  /** Canonical reference the image is stored under (aliases resolved). */
  ref: string;
  layers: number;
  /** Bytes in the image's layer dirs (apparent sizes), measured once when stored. */
  sizeBytes: number;
  createdAt: string;
}

export interface VolumeInfo {
  name: string;
  sizeMB: number;
  /** Host path of the mounted filesystem. */
  path: string;
}

export interface DeleteOptions {
  /** Keep the overlay upper dir (the sandbox's writes) under the sandbox dir for inspection. */
  keepUpper?: boolean;
}

export interface Engine {
  ensureImage(ref: string): Promise<ImageInfo>;
  /** Whether the image is stored already: false means ensureImage builds it (the base) or fails. */
  hasImage(ref: string): boolean;
  importImage(tarPath: string, ref: string): Promise<ImageInfo>;
  createSandbox(spec: SandboxSpec): Promise<SandboxInfo>;
  /** Resolves once sandboxd answers /health, rejects after timeoutMs. */
  waitReady(id: string, timeoutMs?: number): Promise<void>;
  freeze(id: string): Promise<void>;
  thaw(id: string): Promise<void>;
  stats(id: string): Promise<SandboxStats>;
  /**
   * Gives a live sandbox a new memory limit (and CPU, memory/2048 cores) in place: its processes
   * keep running. Rejects when the kernel refuses (e.g. more memory in use than the new limit);
   * the old limit then stays.
   */
  resize(id: string, memoryMB: number): Promise<SandboxInfo>;
  stopSandbox(id: string, graceSeconds: number): Promise<SandboxInfo>;
  deleteSandbox(id: string, opts?: DeleteOptions): Promise<void>;
  list(): Promise<SandboxInfo[]>;
  inspect(id: string): Promise<SandboxInfo>;
  createVolume(name: string, sizeMB: number): Promise<VolumeInfo>;
  /**
   * Grows a volume's filesystem to sizeMB (never shrinks; equal is a no-op), online even while a
   * sandbox mounts it. VolumeInUseError: attached, and this host cannot resize online (no
   * CAP_SYS_RESOURCE); retry once the sandbox is gone.
   */
  growVolume(name: string, sizeMB: number): Promise<VolumeInfo>;
  deleteVolume(name: string): Promise<void>;
  listVolumes(): Promise<VolumeInfo[]>;
  /**
   * The tail (at most maxBytes) of a container's output log from byte `offset` on: a command
   * container's stdout/stderr (job tasks), sandboxd's for a sandbox. Missing container: ''.
   */
  readLog(id: string, offset: number, maxBytes: number): Promise<{ text: string; next: number }>;
}
