// Host mounts a sandbox needs beside runc's state dir (/run/tarmac, tmpfs), not under home:
//   rootfs/<id>   the overlay mount point (sandbox root)
//   sysfs/<id>    a sysfs mounted from inside the sandbox's netns, bound read-only at /sys
// runc mounts these from inside the sandbox's user namespace, where root is an unmapped "other" to
// the host's directories: every component of the path must be searchable by others, and a home
// such as /root/.tarmac is not (/root is 0700). The runtime dir, volumes and files are bind
// sources, which runc 1.1 opens before it enters the user namespace.
import { chmodSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMountPoint } from './mounts.js';
import type { CommandRunner } from './runner.js';

export class RunMounts {
  private ready = false;

  constructor(
    /** The parent of runc's root, e.g. /run/tarmac. */
    private readonly dir: string,
    private readonly runner: CommandRunner,
  ) {}

  rootfs(id: string): string {
    return join(this.parent('rootfs'), id);
  }

  sysfs(id: string): string {
    return join(this.parent('sysfs'), id);
  }

  /**
   * From the host, inside the sandbox's netns (one spawn, before the container starts):
   *  - a sysfs mount for the sandbox's /sys. A user namespace that does not own the netns (ours
   *    is made by the host, network.ts) may not mount sysfs, and a bind of the host's /sys would
   *    show the host's network devices; a sysfs mounted by a process in the sandbox's netns shows
   *    the sandbox's own (what `ip netns exec` does for its commands);
   *  - ports below 1024 bindable and ICMP datagram sockets (ping) open to every group: root in the
   *    sandbox's user namespace holds no capability over a host-made netns (CAP_NET_BIND_SERVICE;
   *    CAP_NET_RAW is gone), so these two per-netns sysctls give back what a container's root
   *    expects, and nothing more.
   */
  async prepareNetns(id: string, netnsPath: string): Promise<void> {
    const sys = this.sysfs(id);
    mkdirSync(sys, { recursive: true });
    await this.runner.run('nsenter', [
      `--net=${netnsPath}`,
      'sh',
      '-c',
      [
        'set -e',
        'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start',
        'echo "0 2147483647" > /proc/sys/net/ipv4/ping_group_range',
        'mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$1"',
      ].join('\n'),
      'prepare-netns',
      sys,
    ]);
  }

  /** Unmounts and removes what prepareNetns and the root mount left (either may be absent). */
  async release(id: string, legacyRootfs: string): Promise<void> {
    // legacyRootfs (bundle/rootfs): where sandboxes made before user namespaces have their root.
    for (const point of [this.rootfs(id), legacyRootfs, this.sysfs(id)]) {
      if (isMountPoint(point)) {
        const r = await this.runner.run('umount', [point], { allowFail: true });
        if (r.code !== 0) await this.runner.run('umount', ['-l', point]);
      }
    }
    for (const d of [this.rootfs(id), this.sysfs(id)]) {
      try {
        rmdirSync(d);
      } catch {
        // never made, or still mounted (lazily unmounting): nothing to do
      }
    }
  }

  /** Mount points of `id` still mounted (leak checks). */
  leftovers(id: string, legacyRootfs: string): string[] {
    return [this.rootfs(id), legacyRootfs, this.sysfs(id)].filter((p) => isMountPoint(p));
  }

  private parent(name: string): string {
    if (!this.ready) {
      for (const d of [this.dir, join(this.dir, 'rootfs'), join(this.dir, 'sysfs')]) {
        mkdirSync(d, { recursive: true });
        chmodSync(d, 0o755);
      }
      this.ready = true;
    }
    return join(this.dir, name);
  }
}
