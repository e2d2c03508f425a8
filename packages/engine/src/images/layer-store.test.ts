// Shared layers of the image store (issue 15 bench): a layer already stored is neither unpacked
// nor read again; upper layers' whiteouts hide what they should in the merged (overlayfs) view;
// every NEW layer is still vetted against the layers below it, also when those were skipped; and
// layers no image names are pruned. Real umoci, real overlay mounts, as root.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { InvalidImageError } from '../errors.js';
import { ProcessRunner } from '../runner.js';
import { withMergedView } from '../test-support/merged-view.js';
import { dockerSaveOf, tarOf, type TarMember } from '../test-support/tar-writer.js';
import { ImageStore } from './image-store.js';

function missing(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root (umoci keeps ownership, overlay mounts)';
  try {
    execFileSync('sh', ['-c', 'command -v umoci'], { stdio: 'ignore' });
  } catch {
    return 'umoci not installed (Debian package umoci, scripts/engine-install.sh)';
  }
  return null;
}
const why = missing();

const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const link = (name: string, target: string): TarMember => ({ name, type: 'symlink', linkname: target });

const BASE: TarMember[] = [
  { name: 'etc/', type: 'dir', mode: 0o750 },
  { name: 'etc/a', data: 'a' },
  { name: 'etc/b', data: 'b' },
  { name: 'opq/', type: 'dir' },
  { name: 'opq/one', data: '1' },
  { name: 'opq/two', data: '2' },
  { name: 'big', data: 'x'.repeat(100_000) },
  link('esc', '/etc'),
];

/**
 * An OCI layout dir as the builds plane hands it over: `blobs` named by `names` (default: their
 * hash), the config claiming `diffIds` (default: the blobs' hashes).
 */
function layoutAt(dir: string, blobs: Buffer[], diffIds: string[], names = blobs.map(sha)): string {
  const dest = join(dir, 'blobs', 'sha256');
  mkdirSync(dest, { recursive: true });
  const put = (data: Buffer, name = sha(data)) => {
    writeFileSync(join(dest, name.slice(7)), data);
    return { digest: name, size: data.length };
  };
  const layers = blobs.map((b, i) => ({
    mediaType: 'application/vnd.oci.image.layer.v1.tar',
    ...put(b, names[i]),
  }));
  const config = put(
    Buffer.from(JSON.stringify({ config: { Env: ['A=1'] }, rootfs: { type: 'layers', diff_ids: diffIds } })),
  );
  const manifest = put(
    Buffer.from(JSON.stringify({ schemaVersion: 2, config: { mediaType: 'x', ...config }, layers })),
  );
  writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
  return dir;
}

describe.skipIf(why !== null)(`shared image layers${why ? ` (skipped: ${why})` : ''}`, () => {
  let work = '';
  let dir = '';
  const store = () => new ImageStore(dir, new ProcessRunner(), systemClock);
  const archive = (name: string, layers: TarMember[][]) => {
    const path = join(work, `${name}.tar`);
    writeFileSync(path, dockerSaveOf(layers));
    return path;
  };
  const layerCount = () => readdirSync(join(dir, '.layers')).length;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'tarmac-layers-'));
    dir = join(work, 'images');
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('an image sharing its lower layers with a stored one reuses them, unpacked once', async () => {
    const a = await store().import(archive('a', [BASE, [{ name: 'app', data: 'one' }]]), 'ws/app:1');
    const b = await store().import(archive('b', [BASE, [{ name: 'app', data: 'two' }]]), 'ws/app:2');
    expect(layerCount()).toBe(3);
    const [baseA, appA] = store().resolve('ws/app:1').layerDirs;
    const [baseB] = store().resolve('ws/app:2').layerDirs;
    expect(baseB).toBe(baseA);
    expect(statSync(join(baseA!, 'etc/a')).ino).toBe(statSync(join(baseB!, 'etc/a')).ino);
    // Real sizes: each image counts all its layers (the 100 kB file of the shared one included).
    expect(a.sizeBytes).toBeGreaterThan(100_000);
    expect(b.sizeBytes).toBe(a.sizeBytes);
    expect(readFileSync(join(appA!, 'app'), 'utf8')).toBe('one');
  });

  it("an upper layer's whiteouts and opaque dirs hide the lower files in the merged view", async () => {
    const upper: TarMember[] = [
      { name: 'etc/.wh.a' }, // no entry for etc/ itself: the dir keeps the lower's mode
      { name: 'opq/', type: 'dir' },
      { name: 'opq/.wh..wh..opq' },
      { name: 'opq/three', data: '3' },
      { name: '.wh.big' },
      { name: '.wh.never-there' },
    ];
    await store().import(archive('w', [BASE, upper]), 'ws/wh:1');
    withMergedView(store().resolve('ws/wh:1').layerDirs, (root) => {
      expect(readdirSync(join(root, 'etc'))).toEqual(['b']);
      expect(statSync(join(root, 'etc')).mode & 0o777).toBe(0o750);
      expect(readdirSync(join(root, 'opq'))).toEqual(['three']);
      expect(existsSync(join(root, 'big'))).toBe(false);
      expect(readdirSync(root).sort()).toEqual(['esc', 'etc', 'opq']);
    });
  });

  it('a whiteout under a dir the same layer then turns into a symlink makes nothing outside', async () => {
    const canary = join(work, 'canary');
    mkdirSync(canary);
    writeFileSync(join(canary, 'victim'), 'host file');
    const lower: TarMember[] = [
      { name: 'a/', type: 'dir' },
      { name: 'a/b', data: 'lower' },
    ];
    // Vetted in order, `a/.wh.b` comes before `a` is a link, so only the conversion can stop it.
    const upper: TarMember[] = [{ name: 'a/.wh.b' }, link('a', canary)];
    await store().import(archive('esc', [lower, upper]), 'ws/esc:1');
    // Followed, the link would have put the whiteout device at <canary>/b.
    expect(readdirSync(canary)).toEqual(['victim']);
    expect(readFileSync(join(canary, 'victim'), 'utf8')).toBe('host file');
  });

  it('a layout from the builder: stored layers are not read, new ones are vetted against them', async () => {
    const base = tarOf(BASE);
    await store().import(archive('base', [BASE]), 'ws/base:1');
    expect(layerCount()).toBe(1);
    // The stored layer's blob is garbage here: skipped by its diff ID, it is never read.
    const garbage = Buffer.from('not a tar at all');
    const app = tarOf([{ name: 'app', data: 'new' }]);
    const ok = layoutAt(join(work, 'ok'), [garbage, app], [sha(base), sha(app)], [sha(base), sha(app)]);
    await store().import(ok, 'ws/app:1');
    withMergedView(store().resolve('ws/app:1').layerDirs, (root) => {
      expect(readFileSync(join(root, 'app'), 'utf8')).toBe('new');
      expect(readFileSync(join(root, 'etc/b'), 'utf8')).toBe('b');
    });
    // A new layer writing through the skipped layer's symlink is refused as before.
    const through = tarOf([{ name: 'esc/pwned', data: 'x' }]);
    const bad = layoutAt(
      join(work, 'bad'),
      [garbage, through],
      [sha(base), sha(through)],
      [sha(base), sha(through)],
    );
    const err = await store()
      .import(bad, 'ws/bad:1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidImageError);
    expect((err as Error).message).toMatch(/esc\/pwned.*goes through the symlink "esc"/);
    // A new layer that is not what the config says it is: refused.
    const liar = layoutAt(
      join(work, 'liar'),
      [garbage, app],
      [sha(base), sha('something else')],
      [sha(base), sha(app)],
    );
    await expect(store().import(liar, 'ws/liar:1')).rejects.toThrow(/layer 1 does not match its diff ID/);
    expect(store().refs().sort()).toEqual(['ws/app:1', 'ws/base:1']);
    expect(layerCount()).toBe(2);
  });

  it('layers no image names are pruned; named, recent and in-use ones stay', async () => {
    await store().import(archive('a', [BASE, [{ name: 'app', data: 'one' }]]), 'ws/app:1');
    await store().import(archive('b', [BASE, [{ name: 'app', data: 'two' }]]), 'ws/app:2');
    const [, appA] = store().resolve('ws/app:1').layerDirs;
    store().remove('ws/app:1');
    expect(store().pruneLayers(60 * 60_000)).toBe(0); // used a moment ago
    expect(store().pruneLayers(0)).toBe(1);
    expect(existsSync(appA!)).toBe(false);
    withMergedView(store().resolve('ws/app:2').layerDirs, (root) => {
      expect(readFileSync(join(root, 'app'), 'utf8')).toBe('two');
    });
    store().remove('ws/app:2');
    expect(store().pruneLayers(0)).toBe(2);
    expect(layerCount()).toBe(0);
  });
});
