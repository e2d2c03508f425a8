// The exported-layer cache between buildah and the engine (layer-export.ts), on layouts shaped as
// `buildah push oci:` writes them: a layer's storage diff ID is not the hash of its exported tar.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LayerExport } from './layer-export.js';

const hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const TAR = 'application/vnd.oci.image.layer.v1.tar';

let work = '';
beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'tarmac-export-'))));
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** What buildah push leaves: `layers` as [storage diff ID, blob name, content or undefined (reused)]. */
function push(layout: string, layers: Array<[string, string, string | undefined]>): void {
  const blobs = join(layout, 'blobs', 'sha256');
  const put = (data: string) => {
    writeFileSync(join(blobs, hex(data)), data);
    return { digest: `sha256:${hex(data)}`, size: data.length };
  };
  const descs = layers.map(([, name, content]) => {
    if (content !== undefined) writeFileSync(join(blobs, name), content);
    return { mediaType: TAR, digest: `sha256:${name}`, size: statSync(join(blobs, name)).size };
  });
  const config = put(
    JSON.stringify({ rootfs: { type: 'layers', diff_ids: layers.map(([s]) => `sha256:${s}`) } }),
  );
  const manifest = put(
    JSON.stringify({ schemaVersion: 2, config: { mediaType: 'c', ...config }, layers: descs }),
  );
  writeFileSync(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
}

function diffIds(layout: string): string[] {
  const read = (d: string) =>
    JSON.parse(readFileSync(join(layout, 'blobs/sha256', d.slice(7)), 'utf8')) as Record<string, never>;
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
    manifests: [{ digest: string }];
  };
  const manifest = read(index.manifests[0].digest) as { config: { digest: string } };
  return (read(manifest.config.digest) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
}

it('caches exported layers by storage ID, offers them to the next push, names layers by content', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const [sBase, sApp1, sApp2] = ['a', 'b', 'c'].map((c) => c.repeat(64));
  const base = 'base layer tar';
  const l1 = join(work, 'l1');
  cache.prepare(l1);
  expect(readdirSync(join(l1, 'blobs/sha256'))).toEqual([]);
  push(l1, [
    [sBase!, hex(base), base],
    [sApp1!, hex('app one'), 'app one'],
  ]);
  expect(cache.finish(l1)).toEqual({ reused: 0, exported: 2 });
  expect(diffIds(l1)).toEqual([`sha256:${hex(base)}`, `sha256:${hex('app one')}`]);

  // The next push finds both layers under their storage IDs and reuses the base.
  const l2 = join(work, 'l2');
  cache.prepare(l2);
  expect(readdirSync(join(l2, 'blobs/sha256')).sort()).toEqual([sBase, sApp1].sort());
  expect(readFileSync(join(l2, 'blobs/sha256', sBase!), 'utf8')).toBe(base);
  push(l2, [
    [sBase!, sBase!, undefined],
    [sApp2!, hex('app two'), 'app two'],
  ]);
  expect(cache.finish(l2)).toEqual({ reused: 1, exported: 1 });
  // The engine is told what the reused blob really is, not buildah's storage ID.
  expect(diffIds(l2)).toEqual([`sha256:${hex(base)}`, `sha256:${hex('app two')}`]);

  expect(cache.prune(60 * 60_000, Date.now())).toBe(0);
  expect(cache.prune(0, Date.now() + 1)).toBe(3);
  expect(readdirSync(join(work, 'cache'))).toEqual([]);
});

it('refuses a compressed layer (its blob digest is not its diff ID)', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const l = join(work, 'l');
  cache.prepare(l);
  push(l, [['d'.repeat(64), hex('x'), 'x']]);
  const index = JSON.parse(readFileSync(join(l, 'index.json'), 'utf8')) as {
    manifests: [{ digest: string }];
  };
  const mPath = join(l, 'blobs/sha256', index.manifests[0].digest.slice(7));
  writeFileSync(mPath, readFileSync(mPath, 'utf8').replace(TAR, `${TAR}+gzip`));
  expect(() => cache.finish(l)).toThrow(/not an uncompressed tar/);
});
