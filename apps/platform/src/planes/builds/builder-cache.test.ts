// The builder's layer cache GC on real buildah (its own storage in a temporary directory): a
// dangling step image older than the age limit goes, a newer one stays, the tagged base image
// always stays; above the size limit every dangling image goes; never while a build runs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseImages, staleImages, StorageGate } from './builder-cache.js';
import { Buildah } from './buildah.js';

function missing(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root (buildah with overlay storage)';
  try {
    execFileSync('sh', ['-c', 'command -v buildah'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'buildah not installed';
  }
}

describe('builder cache: which images are stale', () => {
  it('keeps untagged images only, picks those created before the age limit, oldest first', () => {
    const now = Date.UTC(2026, 10, 29);
    const json = JSON.stringify([
      { id: 'aaaaaaaaaaaa', names: null, created: now / 1000 - 7200 },
      { id: 'bbbbbbbbbbbb', names: null, created: now / 1000 - 60 },
      { id: 'cccccccccccc', names: ['docker.io/tarmac/base:latest'], created: 1 },
      { id: 'dddddddddddd', names: null, created: now / 1000 - 9000 },
      { id: '../etc', names: null, created: 1 },
    ]);
    const images = parseImages(json);
    expect(images.map((i) => i.id)).toEqual(['aaaaaaaaaaaa', 'bbbbbbbbbbbb', 'dddddddddddd']);
    expect(staleImages(images, 3_600_000, now)).toEqual(['dddddddddddd', 'aaaaaaaaaaaa']);
    expect(parseImages('')).toEqual([]);
  });

  it('a prune runs only with no build running, and a build starting meanwhile waits for it', async () => {
    const gate = new StorageGate();
    await gate.enter();
    expect(gate.exclusive(async () => 1)).toBeUndefined();
    gate.leave();
    let release = () => {};
    const prune = gate.exclusive(() => new Promise<number>((r) => (release = () => r(2))));
    expect(prune).toBeDefined();
    expect(gate.exclusive(async () => 3)).toBeUndefined(); // one prune at a time
    let entered = false;
    const build = gate.enter().then(() => (entered = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(entered).toBe(false);
    release();
    expect(await prune).toBe(2);
    await build;
    expect(entered).toBe(true);
  });
});

const skip = missing();
describe.skipIf(skip !== null)(`builder cache on real buildah${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-builder-cache-'));
  const root = join(dir, 'storage');
  const runroot = join(dir, 'run');
  const buildah = (...args: string[]) =>
    execFileSync('buildah', ['--root', root, '--runroot', runroot, '--storage-driver', 'overlay', ...args], {
      encoding: 'utf8',
    }).trim();
  const builder = new Buildah({
    root,
    runroot,
    isolation: 'chroot',
    network: 'none',
    memoryMB: 256,
    timeoutMs: 60_000,
    trustedCaPem: '',
  });
  /** A step image: committed from scratch, untagged unless `name`. */
  const image = (name?: string) => {
    const c = buildah('from', 'scratch');
    const id = buildah('commit', '--quiet', c, ...(name ? [name] : []));
    buildah('rm', c);
    return id.slice(0, 12);
  };
  const dangling = () => parseImages(buildah('images', '--all', '--json', '--filter', 'dangling=true'));
  const big = { maxAgeMs: 3_600_000, maxBytes: 1024 ** 4 };

  beforeAll(() => {
    image('docker.io/tarmac/base:latest');
  });
  afterAll(() => {
    try {
      buildah('rm', '--all');
      execFileSync('sh', ['-c', `umount ${root}/overlay 2>/dev/null; true`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('removes step images older than the age limit and keeps newer ones and the base image', async () => {
    const old = image();
    expect(dangling().map((i) => i.id)).toEqual([old]);
    // Now: nothing is an hour old.
    expect(await builder.pruneCache(big, Date.now())).toBe(0);
    expect(dangling().map((i) => i.id)).toEqual([old]);
    // Two hours on: the step image is stale.
    expect(await builder.pruneCache(big, Date.now() + 7_200_000)).toBe(1);
    expect(dangling()).toEqual([]);
    expect(buildah('images', '--format', '{{.Name}}')).toContain('tarmac/base');
  });

  it('above the size limit every step image goes, however new; the base image stays', async () => {
    image();
    image();
    expect(dangling()).toHaveLength(2);
    expect(await builder.pruneCache({ maxAgeMs: 3_600_000, maxBytes: 1 }, Date.now())).toBe(2);
    expect(dangling()).toEqual([]);
    expect(buildah('images', '--format', '{{.Name}}')).toContain('tarmac/base');
  });
});
