// Stopping and removing a sandbox (LocalEngine.stopSandbox, deleteSandbox and a failed create):
// ARCHITECTURE.md "Lifecycle", and `leftovers`, which says what a teardown failed to remove.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxInfo } from './engine.js';
import { isMountPoint } from './mounts.js';
import { diskPaths, releaseSandboxDisk } from './sandbox-disk.js';
import type { SandboxHost } from './sandbox-host.js';
import { sandboxInfo } from './sandbox-info.js';
import { bootEnvFile } from './boot-env.js';

export async function stopSandbox(host: SandboxHost, id: string, graceSeconds: number): Promise<SandboxInfo> {
  const rec = host.files.read(id);
  if (host.runc.alive(id)) {
    const oomBefore = host.cgroups.oomKills(rec.cgroup) ?? 0;
    // Frozen tasks cannot act on SIGTERM; thaw so the grace period means something.
    if (host.cgroups.exists(rec.cgroup) && host.cgroups.isFrozen(rec.cgroup)) host.cgroups.thaw(rec.cgroup);
    await host.runc.killAll(id, 'TERM');
    let exitCode = 143;
    if (!(await waitDead(host, id, graceSeconds * 1000))) {
      await host.runc.killAll(id, 'KILL');
      exitCode = 137;
      await waitDead(host, id, 5000);
    }
    const oom = (host.cgroups.oomKills(rec.cgroup) ?? 0) > oomBefore;
    host.files.writeStop(id, { reason: 'stopped', exitCode, oomKilled: oom });
  }
  return sandboxInfo(host, host.files.read(id));
}

async function waitDead(host: SandboxHost, id: string, ms: number): Promise<boolean> {
  const deadline = host.clock.now() + ms;
  while (host.runc.alive(id)) {
    if (host.clock.now() >= deadline) return false;
    await host.clock.sleep(10);
  }
  return true;
}

export async function teardownSandbox(
  host: SandboxHost,
  id: string,
  ip: string | null,
  keepUpper: boolean,
): Promise<void> {
  const paths = host.files.layout(id);
  await host.runc.delete(id);
  host.bundles.remove(id); // config.json and boot env: the sandbox's secrets never outlive it
  await host.runMounts.release(id, paths.rootfs);
  await releaseSandboxDisk(host.runner, paths.root, keepUpper);
  await host.network.detach(id, ip);
  host.cgroups.remove(`${host.opts.cgroupParent ?? 'tarmac'}/${id}`);
  if (keepUpper) {
    for (const p of [
      paths.bundle,
      paths.work,
      diskPaths(paths.root).image,
      diskPaths(paths.root).mnt,
      join(paths.root, 'sandbox.json'),
      join(paths.root, 'stopped.json'),
      bootEnvFile(paths.root), // where an engine from before bundle-dirs.ts kept the boot env
    ]) {
      rmSync(p, { recursive: true, force: true });
    }
  } else {
    rmSync(paths.root, { recursive: true, force: true });
  }
}

/** What a deleted sandbox left behind (mounts, cgroups, netns, veth, lease, files); [] is clean. */
export async function sandboxLeftovers(host: SandboxHost, id: string, ip: string): Promise<string[]> {
  const paths = host.files.layout(id);
  const left = [...(await host.network.leftovers(id, ip))];
  left.push(...host.runMounts.leftovers(id, paths.rootfs).map((m) => `mount ${m}`));
  left.push(...host.bundles.leftovers(id).map((d) => `bundle ${d}`));
  if (isMountPoint(diskPaths(paths.root).mnt)) left.push(`mount ${diskPaths(paths.root).mnt}`);
  left.push(...host.cgroups.present(`${host.opts.cgroupParent ?? 'tarmac'}/${id}`).map((d) => `cgroup ${d}`));
  if (host.runc.state(id)) left.push(`runc state ${id}`);
  return left;
}
