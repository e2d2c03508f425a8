// The OCI runtime config for a sandbox: runc's defaults (`runc spec`: capabilities, masked and
// read-only paths, mounts) plus our namespaces, limits and injected runtime, and the hardening of
// issue 19: no CAP_NET_RAW, a user namespace, a seccomp filter, an open-files limit.
import { sandboxSeccomp } from './seccomp.js';
import { idMappings, type IdRange } from './userns.js';

export interface OciMount {
  destination: string;
  type: string;
  source: string;
  options: string[];
}

export interface SandboxOciInput {
  rootfs: string;
  /** A sysfs mounted in the sandbox's netns (run-mounts.ts), bound read-only at /sys. */
  sysfs: string;
  args: string[];
  env: string[];
  cwd: string;
  hostname: string;
  cgroupsPath: string;
  memoryMB: number;
  /** A startup CPU boost (SandboxSpec.startupCpuCores). */
  startupCpuCores?: number;
  pidsLimit: number;
  /** RLIMIT_NOFILE (soft = hard) of every process in the sandbox. */
  nofileLimit: number;
  /** The user namespace's id range: root inside is `range.base` on the host. */
  idRange: IdRange;
  extraMounts: OciMount[];
}

/**
 * Default RLIMIT_NOFILE. Per process; what bounds a sandbox's total is pids limit x this (cgroup
 * v1 has no per-cgroup file count), and before that its memory limit: every open file's kernel
 * objects are charged to the sandbox's memory cgroup (issue 19 item 13, ARCHITECTURE.md).
 */
export const DEFAULT_NOFILE_LIMIT = 4096;

/**
 * runc's default capability set (what `runc spec` writes) without CAP_NET_RAW: raw and packet
 * sockets let a sandbox forge ARP and IP traffic on the bridge (issue 19 item 3). ping still works
 * through ICMP datagram sockets (net.ipv4.ping_group_range, set in the sandbox's netns). Being in
 * a user namespace, these act only on what the sandbox's namespace owns.
 */
export const DEFAULT_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/sys/firmware',
  '/proc/scsi',
  '/sys/devices/virtual/powercap',
  // mount points in sysfs (empty in a fresh sysfs; covered in case a kernel fills them)
  '/sys/kernel/security',
  '/sys/kernel/debug',
  '/sys/kernel/tracing',
  '/sys/kernel/config',
  '/sys/fs/bpf',
  '/sys/fs/fuse/connections',
  '/sys/fs/pstore',
];

const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

const BASE_MOUNTS: OciMount[] = [
  { destination: '/proc', type: 'proc', source: 'proc', options: [] },
  {
    destination: '/dev',
    type: 'tmpfs',
    source: 'tmpfs',
    options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'],
  },
  {
    destination: '/dev/pts',
    type: 'devpts',
    source: 'devpts',
    options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
  },
  {
    destination: '/dev/shm',
    type: 'tmpfs',
    source: 'shm',
    options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'],
  },
  { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
  {
    destination: '/sys/fs/cgroup',
    type: 'cgroup',
    source: 'cgroup',
    options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'],
  },
];

/** Where /sys goes in the mount list: after /dev/mqueue, before /sys/fs/cgroup. */
const SYS_AT = BASE_MOUNTS.findIndex((m) => m.destination === '/sys/fs/cgroup');

/** The CFS period the sandboxes' CPU quota is expressed over (µs). */
export const CPU_PERIOD_US = 100_000;

/** CPU quota for `memoryMB / 2048` cores over a 100 ms period (at least 1 ms of CPU). */
export function cpuQuota(memoryMB: number, period = CPU_PERIOD_US): number {
  return Math.max(1000, Math.round((memoryMB / 2048) * period));
}

export function sandboxOciSpec(input: SandboxOciInput): object {
  const caps = [...DEFAULT_CAPS];
  const memBytes = input.memoryMB * 1024 * 1024;
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: input.args,
      env: input.env,
      cwd: input.cwd,
      capabilities: { bounding: caps, effective: caps, permitted: caps, ambient: [] },
      noNewPrivileges: true,
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: input.nofileLimit, soft: input.nofileLimit }],
    },
    root: { path: input.rootfs, readonly: false },
    hostname: input.hostname,
    mounts: [
      ...BASE_MOUNTS.slice(0, SYS_AT),
      // Not a sysfs of its own: the kernel refuses that to a user namespace that does not own the
      // netns (ours is made by the host). A sysfs the host mounted from inside the sandbox's netns,
      // so /sys/class/net shows the sandbox's devices, read-only; nothing is mounted below it.
      {
        destination: '/sys',
        type: 'bind',
        source: input.sysfs,
        options: ['bind', 'nosuid', 'noexec', 'nodev', 'ro'],
      },
      ...BASE_MOUNTS.slice(SYS_AT),
      ...input.extraMounts,
    ],
    linux: {
      cgroupsPath: input.cgroupsPath,
      resources: {
        devices: [{ allow: false, access: 'rwm' }],
        memory: { limit: memBytes },
        cpu: {
          quota: Math.max(cpuQuota(input.memoryMB), Math.round((input.startupCpuCores ?? 0) * CPU_PERIOD_US)),
          period: CPU_PERIOD_US,
        },
        pids: { limit: input.pidsLimit },
      },
      namespaces: [
        { type: 'pid' },
        // No network namespace here: runc runs inside the sandbox's netns (Runc.run) and the
        // container stays in it. Listed, runc 1.1's `exec` would join the user namespace first and
        // then be refused the host-owned netns. The container still cannot leave it: setns and
        // unshare are not in the seccomp allow-list and it holds no CAP_SYS_ADMIN.
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
        { type: 'user' },
      ],
      uidMappings: idMappings(input.idRange),
      gidMappings: idMappings(input.idRange),
      seccomp: sandboxSeccomp(process.arch),
      maskedPaths: MASKED_PATHS,
      readonlyPaths: READONLY_PATHS,
    },
  };
}
