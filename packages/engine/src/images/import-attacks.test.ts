// Issue 19 item 1: hostile image archives, each built here member by member, imported for real
// (our reader + umoci, as root). None may create, change, delete or read a file outside the
// image store; each is refused with a 400-class InvalidImageError whose message quotes no host
// content. A canary directory outside the store holds a secret file the attacks aim at.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { InvalidImageError } from '../errors.js';
import { ProcessRunner } from '../runner.js';
import { withMergedView } from '../test-support/merged-view.js';
import { dockerSaveOf, tarOf, type TarMember } from '../test-support/tar-writer.js';
import { ImageStore } from './image-store.js';
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from './import-limits.js';

const SECRET = 'canary-secret-7f3a: root:x:0:0';

function missing(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root (umoci keeps ownership only as root)';
  try {
    execFileSync('sh', ['-c', 'command -v umoci'], { stdio: 'ignore' });
  } catch {
    return 'umoci not installed (Debian package umoci, scripts/engine-install.sh)';
  }
  return null;
}
const why = missing();

describe.skipIf(why !== null)(`hostile image archives${why ? ` (skipped: ${why})` : ''}`, () => {
  let work = '';
  let canary = '';
  let victim = '';
  let storeDir = '';
  const store = (limits: Partial<ImportLimits> = {}) =>
    new ImageStore(storeDir, new ProcessRunner(), systemClock, {}, { ...DEFAULT_IMPORT_LIMITS, ...limits });

  /** The canary dir as it must stay: exactly one file with the secret, unchanged. */
  function expectCanaryUntouched(): void {
    expect(readdirSync(canary)).toEqual(['victim']);
    expect(readFileSync(victim, 'utf8')).toBe(SECRET);
    expect(statSync(victim).nlink).toBe(1); // no hard link was made to it
  }

  async function refused(
    archive: Buffer,
    pattern: RegExp,
    limits: Partial<ImportLimits> = {},
  ): Promise<void> {
    const path = join(work, 'archive.tar');
    writeFileSync(path, archive);
    const err = await store(limits)
      .import(path, 'attack/x:1')
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(InvalidImageError);
    const message = (err as Error).message;
    expect(message).toMatch(pattern);
    expect(message).not.toContain('canary-secret');
    expect(message).not.toContain('root:x:0:0');
    expectCanaryUntouched();
    // Nothing half-made is left in the store either (no image, no layer of one).
    expect(readdirSync(storeDir).filter((d) => !d.startsWith('.old-') && d !== '.layers')).toEqual([]);
    if (existsSync(join(storeDir, '.layers'))) expect(readdirSync(join(storeDir, '.layers'))).toEqual([]);
  }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'tarmac-attack-'));
    canary = join(work, 'canary');
    victim = join(canary, 'victim');
  });

  beforeEach(() => {
    rmSync(canary, { recursive: true, force: true });
    mkdirSync(canary);
    writeFileSync(victim, SECRET);
    storeDir = mkdtempSync(join(work, 'store-'));
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const link = (name: string, target: string): TarMember => ({ name, type: 'symlink', linkname: target });

  it('a layer writing through a symlink of an earlier layer is refused (absolute and relative links)', async () => {
    await refused(
      dockerSaveOf([[link('esc', canary)], [{ name: 'esc/new', data: 'pwned' }]]),
      /esc\/new.*goes through the symlink "esc"/,
    );
    expect(existsSync(join(canary, 'new'))).toBe(false);
    const up = '../'.repeat(20) + canary.slice(1);
    await refused(
      dockerSaveOf([[link('esc', up)], [{ name: 'esc/victim', data: 'overwritten' }]]),
      /symlink/,
    );
    // Within one layer too, and through a link to "/".
    await refused(
      dockerSaveOf([[link('root', '/'), { name: `root${canary}/new`, data: 'pwned' }]]),
      /goes through the symlink "root"/,
    );
  });

  it('whiteouts through a symlink delete nothing', async () => {
    await refused(dockerSaveOf([[link('esc', canary)], [{ name: 'esc/.wh.victim' }]]), /symlink/);
    await refused(dockerSaveOf([[link('esc', canary)], [{ name: 'esc/.wh..wh..opq' }]]), /symlink/);
  });

  it('a symlinked manifest.json, config or layer in the outer archive is refused without reading it', async () => {
    await refused(dockerSaveOf([], [link('manifest.json', victim)]), /"manifest.json" is a symlink/);
    await refused(
      dockerSaveOf([[{ name: 'a', data: 'a' }]], [link('cfg.json', victim)], 'cfg.json'),
      /is a symlink/,
    );
    const up = `${'../'.repeat(12)}${victim.slice(1)}`;
    await refused(dockerSaveOf([], [link('manifest.json', up)]), /symlink leading out of the archive/);
    const viaHardlink: TarMember = { name: 'manifest.json', type: 'hardlink', linkname: victim.slice(1) };
    await refused(dockerSaveOf([], [viaHardlink]), /is a hardlink/);
    // A manifest naming a host path, or one that is not JSON, quotes nothing of the file.
    const hostPath = [{ name: 'manifest.json', data: JSON.stringify([{ Config: victim, Layers: [] }]) }];
    await refused(dockerSaveOf([], hostPath), /leaves the image/);
    await refused(
      dockerSaveOf([], [{ name: 'manifest.json', data: SECRET }]),
      /manifest.json is not valid JSON/,
    );
  });

  it('names and link targets given in pax headers are held to the same rules', async () => {
    const dd = { name: 'innocent', pax: { path: `../../../../../..${canary}/pax` }, data: 'x' };
    await refused(dockerSaveOf([[dd]]), /leaves the image/);
    const hl = { name: 'hl', type: 'hardlink' as const, linkname: 'ok', pax: { linkpath: victim } };
    await refused(dockerSaveOf([[hl]]), /leaves the image/);
    // The outer archive too: a pax path cannot smuggle a member out of the extraction dir.
    await refused(
      dockerSaveOf([], [{ name: 'fine', pax: { path: `../../../..${canary}/o` }, data: 'x' }]),
      /leaves the image/,
    );
    expect(existsSync(join(canary, 'pax'))).toBe(false);
  });

  it("overlayfs's trusted.* xattrs are refused", async () => {
    const opaque = { name: 'd', type: 'dir' as const, pax: { 'SCHILY.xattr.trusted.overlay.opaque': 'y' } };
    await refused(dockerSaveOf([[opaque]]), /xattr "trusted.overlay.opaque"/);
  });

  it('hard links out of the image root are refused', async () => {
    await refused(
      dockerSaveOf([[{ name: 'hl', type: 'hardlink', linkname: `../../../../..${victim}` }]]),
      /leaves the image/,
    );
    await refused(dockerSaveOf([[{ name: 'hl', type: 'hardlink', linkname: victim }]]), /leaves the image/);
    await refused(
      dockerSaveOf([[link('esc', canary)], [{ name: 'hl', type: 'hardlink', linkname: 'esc/victim' }]]),
      /symlink/,
    );
  });

  it('absolute and ".." member names are refused, in layers and in the outer archive', async () => {
    await refused(dockerSaveOf([[{ name: `${canary}/abs`, data: 'x' }]]), /leaves the image/);
    await refused(dockerSaveOf([[{ name: `../../../../../..${canary}/dd`, data: 'x' }]]), /leaves the image/);
    await refused(
      dockerSaveOf([], [{ name: `../../../../..${canary}/outer`, data: 'x' }]),
      /leaves the image/,
    );
    expect(existsSync(join(canary, 'abs'))).toBe(false);
  });

  it('device nodes other than /dev/null and friends are refused', async () => {
    await refused(
      dockerSaveOf([[{ name: 'sda', type: 'block', dev: [8, 0] }]]),
      /device node "sda" \(block 8:0\)/,
    );
    await refused(dockerSaveOf([[{ name: 'mem', type: 'char', dev: [1, 1] }]]), /char 1:1/);
    // /dev/null (1:3) is what a rootfs export carries: accepted.
    const path = join(work, 'null.tar');
    writeFileSync(
      path,
      dockerSaveOf([
        [
          { name: 'dev/', type: 'dir' },
          { name: 'dev/null', type: 'char', dev: [1, 3] },
        ],
      ]),
    );
    const img = await store().import(path, 'ok/null:1');
    expect(img.layers).toBe(1);
  });

  it('sizes are capped: archive bytes, unpacked bytes (before reading the data), member count', async () => {
    const small = dockerSaveOf([[{ name: 'a', data: 'x'.repeat(5000) }]]);
    await refused(small, /larger than 4096 bytes/, { maxArchiveBytes: 4096 });
    await refused(small, /more than 1000 bytes/, { maxUnpackedBytes: 1000 });
    // A header claiming 8 GB is refused at the header: nothing is read or written for it.
    const limits = { maxUnpackedBytes: 1_000_000 };
    await refused(
      tarOf([{ name: 'huge.bin', claimedSize: 8e9 }]),
      /more than 1000000 bytes unpacked/,
      limits,
    );
    await refused(
      dockerSaveOf([[{ name: 'big', claimedSize: 8e9 }]]),
      /unpack to more than 1000000 bytes/,
      limits,
    );
    const many = Array.from({ length: 50 }, (_, i) => ({ name: `f${i}`, data: '' }));
    await refused(dockerSaveOf([many]), /more than 40 members/, { maxEntries: 40 });
  });

  it('a setuid-root file of an image is out of reach of host users: the store is 0700', async () => {
    const shared = join(work, 'shared-store');
    mkdirSync(shared, { mode: 0o755 }); // as an operator's TARMAC_IMAGE_DIR might be
    const path = join(work, 'suid.tar');
    writeFileSync(path, dockerSaveOf([[{ name: 'rootshell', data: '#!/bin/sh', mode: 0o4755 }]]));
    const images = new ImageStore(shared, new ProcessRunner(), systemClock);
    await images.import(path, 'ok/suid:1');
    expect(statSync(join(images.resolve('ok/suid:1').layerDirs[0]!, 'rootshell')).mode & 0o7777).toBe(0o4755);
    expect(statSync(shared).mode & 0o777).toBe(0o700);
  });

  it('a refused archive leaves no file descriptor open', async () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const archive = dockerSaveOf([[link('esc', canary)], [{ name: 'esc/new', data: 'x'.repeat(100_000) }]]);
    await refused(archive, /symlink/); // warm-up: lazily opened descriptors of the runtime
    const before = open();
    for (let i = 0; i < 5; i++) {
      await refused(archive, /symlink/);
      await refused(dockerSaveOf([], [link('manifest.json', victim)]), /symlink/);
    }
    expect(open()).toBeLessThanOrEqual(before);
  });

  it("docker save's links between identical layers are followed inside the archive, never on disk", async () => {
    const layer = tarOf([{ name: 'same', data: 'same layer' }]);
    const manifest = [{ Config: 'config.json', Layers: ['a/layer.tar', 'b/layer.tar'] }];
    const path = join(work, 'dedup.tar');
    writeFileSync(
      path,
      tarOf([
        { name: 'a/layer.tar', data: layer },
        { name: 'b/', type: 'dir' },
        link('b/layer.tar', '../a/layer.tar'),
        { name: 'config.json', data: '{}' },
        { name: 'manifest.json', data: JSON.stringify(manifest) },
      ]),
    );
    await store().import(path, 'ok/dedup:1');
    expect(readFileSync(join(store().resolve('ok/dedup:1').layerDirs[0]!, 'same'), 'utf8')).toBe(
      'same layer',
    );
  });

  it('a well-formed image with symlinks and whiteouts still imports, its links kept inside', async () => {
    const path = join(work, 'ok.tar');
    writeFileSync(
      path,
      dockerSaveOf([
        [
          { name: 'usr/bin/tool', data: 'bin' },
          link('bin', 'usr/bin'),
          link('abs', canary),
          { name: 'gone', data: 'g' },
        ],
        [{ name: '.wh.gone' }, { name: 'usr/bin/more', data: 'more' }],
      ]),
    );
    await store().import(path, 'ok/links:1');
    withMergedView(store().resolve('ok/links:1').layerDirs, (root) => {
      expect(readdirSync(root).sort()).toEqual(['abs', 'bin', 'usr']);
      expect(readdirSync(join(root, 'usr/bin')).sort()).toEqual(['more', 'tool']);
    });
    expectCanaryUntouched();
  });
});
