import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidImageError } from '../errors.js';
import { ProcessRunner } from '../runner.js';
import {
  IN_PROCESS_SCAN_MAX_ENTRIES,
  WALK_BUDGET,
  scanUnpackedLayer,
  walkUnpackedLayer,
} from './layer-scan.js';

// Device nodes need mknod (root); the image import runs as root anyway.
const root = process.getuid?.() === 0;
const du = (dir: string) =>
  Number(/^(\d+)/.exec(execFileSync('du', ['-s', '-b', '--', dir], { encoding: 'utf8' }))![1]);
const mknod = (path: string, type: 'b' | 'c', major: number, minor: number) =>
  execFileSync('mknod', [path, type, String(major), String(minor)]);
const runner = new ProcessRunner();
const BOTH = [
  ['in process', 1],
  ['by find and du', IN_PROCESS_SCAN_MAX_ENTRIES + 1],
] as const;

describe('scanUnpackedLayer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'layer-scan-'));
    mkdirSync(join(dir, 'app/lib'), { recursive: true });
    writeFileSync(join(dir, 'app/index.js'), 'console.log("hi")\n');
    writeFileSync(join(dir, 'app/lib/big.bin'), Buffer.alloc(100_000, 1));
    // Hard links count once, as du counts them; symlinks count their own length.
    linkSync(join(dir, 'app/lib/big.bin'), join(dir, 'app/big-again.bin'));
    symlinkSync('lib/big.bin', join(dir, 'app/link'));
    symlinkSync('/etc/shadow', join(dir, 'app/outside'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('measures what du -s -b measures (hard links once, symlinks not followed)', () => {
    expect(walkUnpackedLayer(dir)).toBe(du(dir));
    expect(walkUnpackedLayer(dir)).toBeLessThan(200_000);
  });

  // A few tar members can name deep paths whose missing parents umoci creates: the member count
  // does not bound the walk, the budget does. (A wide tree stands for it here: what matters is a
  // tree past the budget.)
  const pastTheBudget = () => {
    mkdirSync(join(dir, 'many'));
    for (let i = 0; i <= WALK_BUDGET; i++) writeFileSync(join(dir, 'many', String(i)), '');
  };

  it('a tree larger than its tar said is left to find and du after the budget', async () => {
    pastTheBudget();
    expect(walkUnpackedLayer(dir, WALK_BUDGET)).toBeUndefined();
    expect(walkUnpackedLayer(dir)).toBe(du(dir));
    expect(await scanUnpackedLayer(runner, dir, 1)).toBe(du(dir));
  });

  it.skipIf(!root)('a tree past the budget still has its device nodes refused', async () => {
    pastTheBudget();
    mknod(join(dir, 'many', 'sda'), 'b', 8, 0);
    await expect(scanUnpackedLayer(runner, dir, 1)).rejects.toThrow(/device node "many\/sda" is not allowed/);
  });

  it.each(BOTH)('%s: gives the same bytes', async (_how, entries) => {
    expect(await scanUnpackedLayer(runner, dir, entries)).toBe(du(dir));
  });

  it.skipIf(!root).each(BOTH)(
    '%s: keeps overlay whiteouts (char 0:0) and harmless devices, refuses a disk',
    async (_how, entries) => {
      mknod(join(dir, 'app/gone'), 'c', 0, 0);
      mknod(join(dir, 'app/null'), 'c', 1, 3);
      expect(await scanUnpackedLayer(runner, dir, entries)).toBe(du(dir));
      mknod(join(dir, 'app/lib/sda'), 'b', 8, 0);
      const refused = scanUnpackedLayer(runner, dir, entries);
      await expect(refused).rejects.toThrow(InvalidImageError);
      await expect(refused).rejects.toThrow(/device node "app\/lib\/sda" is not allowed/);
    },
  );

  it.skipIf(!root).each(BOTH)(
    '%s: refuses a character device other than the harmless ones',
    async (_how, entries) => {
      mknod(join(dir, 'mem'), 'c', 1, 1);
      await expect(scanUnpackedLayer(runner, dir, entries)).rejects.toThrow(/device node "mem"/);
    },
  );
});
