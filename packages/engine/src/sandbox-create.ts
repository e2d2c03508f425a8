// Creating a sandbox (LocalEngine.createSandbox, after its image check and memory reservation):
// the steps of ARCHITECTURE.md "Lifecycle" from the shifted layers to `runc run`. Any failure
// tears down what was made.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOT_ENV_PATH, bootEnv, bootEnvFile, writeBootEnv } from './boot-env.js';
import { commandContainerArgs } from './command-exit.js';
import type { SandboxInfo, SandboxSpec } from './engine.js';
import { SandboxExistsError } from './errors.js';
import { DEFAULT_NOFILE_LIMIT, sandboxOciSpec } from './oci-spec.js';
import { IN_SANDBOX, sandboxArgs } from './runtime-dir.js';
import { sandboxdProcessEnv } from './sandboxd-env.js';
import { DEFAULT_DISK_MB, mountSandboxRoot } from './sandbox-disk.js';
import type { SandboxRecord } from './sandbox-files.js';
import type { SandboxHost } from './sandbox-host.js';
import { sandboxInfo } from './sandbox-info.js';
import { teardownSandbox } from './sandbox-teardown.js';
import { commandArgs, mergeEnv } from './spec.js';
import { mountSandboxVolumes } from './volume-attachments.js';

/** Host files bind-mounted into a sandbox: read-only, nothing to run or open as a device. */
const RO_FILE = ['bind', 'ro', 'nosuid', 'nodev', 'noexec'];

export async function createSandboxOnHost(host: SandboxHost, spec: SandboxSpec): Promise<SandboxInfo> {
  const image = host.images.resolve(spec.image);
  // Lowers owned by the sandbox's ids (userns.ts): made once per image layer, then a stat.
  const [runtime, lowerDirs] = await Promise.all([
    host.runtime.ensure(),
    host.shifted.layers(image.layerDirs),
  ]);
  const volumeMounts = await mountSandboxVolumes(host, spec);
  if (!host.files.claim(spec.id)) throw new SandboxExistsError(spec.id);
  const paths = host.files.layout(spec.id);
  let ip: string | null = null;
  try {
    mkdirSync(join(paths.root, 'logs'), { recursive: true });
    // config.json and boot-env.json hold the sandbox's secrets: on tmpfs, not under home.
    const bundle = await host.bundles.make(spec.id);
    const diskMB = spec.diskMB ?? host.opts.defaultDiskMB ?? DEFAULT_DISK_MB;
    // The root (sandbox disk + overlay) and the netns wiring are independent spawns: run them
    // together (the create path's latency, ARCHITECTURE.md "Start-up"). Settled both, so a
    // failure of one still lets teardown release what the other made (the address lease).
    // overlayfs lists lowers top first; image layers are stored bottom first.
    const [mounted, attached] = await Promise.allSettled([
      mountSandboxRoot(
        host.runner,
        host.diskPool,
        { root: paths.root, rootfs: host.runMounts.rootfs(spec.id) },
        [...lowerDirs].reverse(),
        diskMB,
        host.idRange,
        spec.fromSnapshot ? host.snapshots.upperOf(spec.fromSnapshot) : '',
      ),
      host.network.attach(spec.id).then(async (net) => {
        await host.runMounts.prepareNetns(spec.id, net.netnsPath);
        return net;
      }),
    ]);
    if (attached.status === 'fulfilled') ip = attached.value.ip;
    if (mounted.status === 'rejected') throw mounted.reason;
    if (attached.status === 'rejected') throw attached.reason;
    const net = attached.value;
    const cgroup = `${host.opts.cgroupParent ?? 'tarmac'}/${spec.id}`;
    const record: SandboxRecord = {
      id: spec.id,
      image: image.ref,
      layerDirs: image.layerDirs,
      ip: net.ip,
      createdAt: host.clock.date().toISOString(),
      memoryMB: spec.memoryMB,
      pidsLimit: spec.pidsLimit ?? host.opts.defaultPidsLimit ?? 1024,
      diskMB,
      ports: spec.ports ?? [],
      volumes: spec.volumes ?? [],
      labels: spec.labels ?? {},
      cgroup,
      ...(spec.command ? { command: true } : {}),
    };
    host.files.write(record);
    const hostname = spec.hostname ?? spec.id;
    const command = spec.command ? commandArgs(spec.command, image) : undefined;
    // A command container (job task) runs with the env as given; a sandbox's own env is its boot
    // file's, not its init's (boot-env.ts).
    const env = mergeEnv(image.env, command ? { HOSTNAME: hostname, ...spec.env } : {});
    const boot = bootEnvFile(bundle);
    if (!command) writeBootEnv(boot, bootEnv(hostname, spec.env ?? {}), host.idRange);
    const oci = sandboxOciSpec({
      rootfs: host.runMounts.rootfs(spec.id),
      sysfs: host.runMounts.sysfs(spec.id),
      // A command container (job task) runs the program under tini, with the env as given.
      args: command ? commandContainerArgs(runtime, command) : sandboxArgs(runtime),
      env: command ? env : sandboxdProcessEnv(env),
      cwd: image.workingDir,
      hostname,
      cgroupsPath: `/${cgroup}`,
      memoryMB: record.memoryMB,
      ...(spec.startupCpuCores ? { startupCpuCores: spec.startupCpuCores } : {}),
      pidsLimit: record.pidsLimit,
      nofileLimit: host.opts.nofileLimit ?? DEFAULT_NOFILE_LIMIT,
      idRange: host.idRange,
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
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(oci), { mode: 0o600 });
    await host.runc.run(spec.id, bundle, paths.log, net.netnsPath);
    return sandboxInfo(host, record);
  } catch (err) {
    await teardownSandbox(host, spec.id, ip, false).catch(() => undefined);
    throw err;
  }
}
