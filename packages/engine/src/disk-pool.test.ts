import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskPool } from './disk-pool.js';
import { ProcessRunner } from './runner.js';

const hasMkfs = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v mkfs.ext4'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasMkfs)(`DiskPool${hasMkfs ? '' : ' (skipped: e2fsprogs not installed)'}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-diskpool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is empty at first, fills to its depth with sparse ext4 images, and hands each out once', async () => {
    const pool = new DiskPool(join(dir, 'pool'), new ProcessRunner(), 2);
    expect(pool.take(64, join(dir, 'a.img'))).toBe(false);
    pool.fill(64);
    await pool.idle();
    expect(readdirSync(join(dir, 'pool')).filter((n) => n.endsWith('.img'))).toHaveLength(2);
    // A second engine on the same home shares the pool: three takes, two images.
    const other = new DiskPool(join(dir, 'pool'), new ProcessRunner(), 2);
    const got = [
      pool.take(64, join(dir, 'a.img')),
      other.take(64, join(dir, 'b.img')),
      pool.take(64, join(dir, 'c.img')),
    ];
    expect(got).toEqual([true, true, false]);
    expect(statSync(join(dir, 'a.img')).size).toBe(64 * 1024 * 1024);
    expect(statSync(join(dir, 'a.img')).blocks * 512).toBeLessThan(8 * 1024 * 1024); // sparse
    expect(execFileSync('dumpe2fs', ['-h', join(dir, 'b.img')], { encoding: 'utf8', stdio: 'pipe' })).toMatch(
      /Filesystem magic number:\s+0xEF53/,
    );
    // Other sizes are not served from it, and nothing half-made is left behind.
    pool.fill(64);
    await pool.idle();
    expect(pool.take(128, join(dir, 'd.img'))).toBe(false);
    expect(existsSync(join(dir, 'd.img'))).toBe(false);
    expect(readdirSync(join(dir, 'pool')).some((n) => n.startsWith('.tmp-'))).toBe(false);
  }, 60_000);
});
