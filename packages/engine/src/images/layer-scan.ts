// The look at an unpacked layer after umoci (layer-unpack.ts): its apparent bytes, as `du -s -b`
// counts them, and no device node the layer check would have refused. A small layer — an app's
// source on top of cached dependency layers, what every warm rebuild stores (issue 15 bench) — is
// walked here, in one pass of lstat() calls (~7 µs an entry); a large one by `find` and `du` in
// child processes, off the event loop. The tar's member count does not bound the tree (umoci makes
// the missing parents of deep member paths), so the walk stops after WALK_BUDGET entries and the
// child processes take over: a hostile layer holds the platform's event loop ~15 ms at most.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidImageError } from '../errors.js';
import type { CommandRunner } from '../runner.js';
import { harmlessDevice } from './layer-check.js';

/** Layers of at most this many tar members are scanned in process. */
export const IN_PROCESS_SCAN_MAX_ENTRIES = 500;
/** Entries the in-process walk looks at before it leaves the tree to the child processes. */
export const WALK_BUDGET = 4 * IN_PROCESS_SCAN_MAX_ENTRIES;

/** Apparent bytes of the unpacked layer at `rootfs`; throws on a refused device node. */
export async function scanUnpackedLayer(
  runner: CommandRunner,
  rootfs: string,
  entries: number,
): Promise<number> {
  const walked = entries <= IN_PROCESS_SCAN_MAX_ENTRIES ? walkUnpackedLayer(rootfs, WALK_BUDGET) : undefined;
  if (walked !== undefined) return walked;
  // Both only read the tree: side by side. A refused device fails the import whatever du says.
  const [, { stdout }] = await Promise.all([
    refuseDevicesFound(runner, rootfs),
    runner.run('du', ['-s', '-b', '--', rootfs]),
  ]);
  const bytes = /^(\d+)\s/.exec(stdout)?.[1];
  if (bytes === undefined) throw new InvalidImageError(`could not measure an image layer: ${stdout}`);
  return Number(bytes);
}

/**
 * `du -s -b` and `find -xdev -type b -o -type c` in one walk: every entry's st_size (a file with
 * several links counted once, as du does), nothing below another filesystem's mount point.
 * Undefined when the tree has more than `budget` entries.
 */
export function walkUnpackedLayer(rootfs: string, budget = Infinity): number | undefined {
  const rootDev = lstatSync(rootfs).dev;
  const linked = new Set<string>();
  let bytes = 0;
  let seen = 0;
  const stack = [''];
  for (let rel = stack.pop(); rel !== undefined; rel = stack.pop()) {
    if (++seen > budget) return undefined;
    const st = lstatSync(rel ? join(rootfs, rel) : rootfs);
    if (st.nlink > 1 && !st.isDirectory()) {
      const key = `${st.dev}:${st.ino}`;
      if (linked.has(key)) continue;
      linked.add(key);
    }
    bytes += st.size;
    if (st.isBlockDevice() || st.isCharacterDevice()) refuseDevice(rel, st.rdev, st.isBlockDevice());
    if (st.isDirectory() && st.dev === rootDev) {
      for (const name of readdirSync(join(rootfs, rel))) stack.push(rel ? `${rel}/${name}` : name);
    }
  }
  return bytes;
}

async function refuseDevicesFound(runner: CommandRunner, rootfs: string): Promise<void> {
  const { stdout } = await runner.run('find', [
    rootfs,
    '-xdev',
    '(',
    '-type',
    'b',
    '-o',
    '-type',
    'c',
    ')',
    '-printf',
    '%y %P\\0',
  ]);
  for (const line of stdout.split('\0').filter(Boolean)) {
    const path = line.slice(2);
    refuseDevice(path, lstatSync(join(rootfs, path)).rdev, line.startsWith('b'));
  }
}

/** 0:0 character devices are overlayfs whiteouts (ours); other devices as the layer check allows. */
function refuseDevice(path: string, rdev: number, block: boolean): void {
  const major = (rdev >> 8) & 0xfff;
  const minor = (rdev & 0xff) | ((rdev >> 12) & 0xfff00);
  const whiteout = !block && major === 0 && minor === 0;
  if (!whiteout && !harmlessDevice(block ? 'block' : 'char', major, minor)) {
    throw new InvalidImageError(
      `bad image archive: device node ${JSON.stringify(path.slice(0, 200))} is not allowed`,
    );
  }
}
