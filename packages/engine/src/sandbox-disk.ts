// Each sandbox's writable layer lives on its own size-limited filesystem (issue 19 item 5): a
// sparse file with an ext4 of `diskMB`, loop-mounted at sandboxes/<id>/disk, holding the overlay's
// upper/ and work/. A sandbox that fills it gets ENOSPC from the kernel, and the host's disk
// never carries more than diskMB for it (the file is sparse, and `discard` gives freed blocks back).
//
// Why not a project quota on one shared filesystem: this host's kernel has neither CONFIG_QUOTA
// (ext4 quotas) nor CONFIG_XFS_QUOTA, and btrfs qgroups answer EDQUOT, not ENOSPC. A per-sandbox
// ext4 costs one spawn on the create path: a loop mount (~7 ms idle) in the same shell as the
// overlay mount, while the netns is wired concurrently. The ext4 (no journal — the layer does not
// outlive a host reboot anyway — and lazily initialised inode tables the kernel is told not to
// zero) is made ahead by the DiskPool, or in the same shell when the pool is empty (~8 ms idle).
import { closeSync, ftruncateSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { MKFS_ARGS, type DiskPool } from './disk-pool.js';
import { isMountPoint } from './mounts.js';
import type { CommandRunner } from './runner.js';
import type { IdRange } from './userns.js';

/** Default per-sandbox disk (the writable layer; volumes have their own sizes). */
export const DEFAULT_DISK_MB = 4096;

export interface DiskLayout {
  /** The sandbox's dir (sandboxes/<id>). */
  root: string;
  /** The overlay mount point (bundle/rootfs). */
  rootfs: string;
}

export function diskPaths(root: string) {
  const mnt = join(root, 'disk');
  return { image: join(root, 'disk.img'), mnt, upper: join(mnt, 'upper'), work: join(mnt, 'work') };
}

const MOUNT_ROOT_SCRIPT = [
  // $1 image, $2 mount point, $3 owner uid:gid of upper/, $4 overlay options, $5 rootfs,
  // $6 "format" when the image is a bare sparse file, $7 a snapshot's upper dir to start from (a
  // fork, snapshots.ts) or "", then mkfs arguments
  'set -e',
  'img=$1 mnt=$2 owner=$3 overlay=$4 rootfs=$5 format=$6 seed=$7',
  'shift 7',
  'if [ "$format" = format ]; then mkfs.ext4 "$@" "$img"; fi',
  'mount -t ext4 -o loop,nodev,nosuid,discard,noinit_itable "$img" "$mnt"',
  'mkdir "$mnt/upper" "$mnt/work"',
  'chown "$owner" "$mnt/upper"',
  'if [ -n "$seed" ]; then cp -a -- "$seed/." "$mnt/upper/"; fi',
  'mount -t overlay overlay -o "$overlay" "$rootfs"',
].join('\n');

/**
 * Makes the sandbox's disk and mounts its root: overlay of `lowers` (top first) with the upper on
 * the sandbox's own ext4. One spawn (a shell running two mounts, mkdir, chown, and mkfs when the
 * pool had no formatted image of this size).
 */
export async function mountSandboxRoot(
  runner: CommandRunner,
  pool: DiskPool,
  layout: DiskLayout,
  lowers: readonly string[],
  diskMB: number,
  range: IdRange,
  /** A snapshot's upper dir the new layer starts as a copy of (a fork). */
  seed = '',
): Promise<void> {
  const p = diskPaths(layout.root);
  mkdirSync(p.mnt, { recursive: true });
  mkdirSync(layout.rootfs, { recursive: true });
  const formatted = pool.take(diskMB, p.image);
  if (!formatted) {
    const fd = openSync(p.image, 'wx');
    try {
      ftruncateSync(fd, diskMB * 1024 * 1024); // sparse
    } finally {
      closeSync(fd);
    }
  }
  const overlay = `lowerdir=${lowers.join(':')},upperdir=${p.upper},workdir=${p.work}`;
  await runner.run('sh', [
    '-c',
    MOUNT_ROOT_SCRIPT,
    'mount-sandbox-root',
    p.image,
    p.mnt,
    `${range.base}:${range.base}`,
    overlay,
    layout.rootfs,
    formatted ? 'ready' : 'format',
    seed,
    ...MKFS_ARGS,
  ]);
}

/**
 * Unmounts the sandbox's disk (after its root), autoclearing the loop device. With `keepUpper`
 * the upper dir is copied out to sandboxes/<id>/upper first (DeleteOptions.keepUpper: the writes
 * stay for inspection where they always were). The image file goes with the sandbox dir.
 */
export async function releaseSandboxDisk(
  runner: CommandRunner,
  root: string,
  keepUpper: boolean,
): Promise<void> {
  const p = diskPaths(root);
  if (!isMountPoint(p.mnt)) return; // a sandbox made before disks, or released already
  // cp -a: ownership and modes as they are (a node copy would make every file host root's).
  if (keepUpper) await runner.run('cp', ['-a', '--', p.upper, join(root, 'upper')]);
  const r = await runner.run('umount', [p.mnt], { allowFail: true });
  if (r.code !== 0) await runner.run('umount', ['-l', p.mnt]);
}
