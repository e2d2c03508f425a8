// The OCI runtime config for a sandbox: runc's defaults (`runc spec`: capabilities, masked and
// read-only paths, mounts) plus our namespaces, limits and injected runtime.

export interface OciMount {
  destination: string;
  type: string;
  source: string;
  options: string[];
}

export interface SandboxOciInput {
  rootfs: string;
  args: string[];
  env: string[];
  cwd: string;
  hostname: string;
  cgroupsPath: string;
  netnsPath: string;
  memoryMB: number;
  pidsLimit: number;
  extraMounts: OciMount[];
}

/** runc's default capability set (what `runc spec` writes), also Docker's minus a few. */
export const DEFAULT_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
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
  { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
  {
    destination: '/sys/fs/cgroup',
    type: 'cgroup',
    source: 'cgroup',
    options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'],
  },
];

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
    },
    root: { path: input.rootfs, readonly: false },
    hostname: input.hostname,
    mounts: [...BASE_MOUNTS, ...input.extraMounts],
    linux: {
      cgroupsPath: input.cgroupsPath,
      resources: {
        devices: [{ allow: false, access: 'rwm' }],
        memory: { limit: memBytes },
        cpu: { quota: cpuQuota(input.memoryMB), period: CPU_PERIOD_US },
        pids: { limit: input.pidsLimit },
      },
      namespaces: [
        { type: 'pid' },
        { type: 'network', path: input.netnsPath },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
      ],
      maskedPaths: MASKED_PATHS,
      readonlyPaths: READONLY_PATHS,
    },
  };
}
