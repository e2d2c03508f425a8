// The exported-layer cache between buildah and the engine (layer-export.ts), on layouts shaped as
// `buildah push oci:` and `dir:` write them (an oci: push gzips, so a blob's name is not its diff ID).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LayerExport } from './layer-export.js';

const hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const id = (c: string) => `sha256:${c.repeat(64)}`;

let work = '';
beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'tarmac-export-'))));
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** What `buildah push oci:` leaves: each layer's blob name and content (undefined: reused). */
function push(layout: string, layers: Array<[string, string | undefined]>): void {
  const blobs = join(layout, 'blobs', 'sha256');
  const put = (data: string) => {
    writeFileSync(join(blobs, hex(data)), data);
    return { digest: `sha256:${hex(data)}`, size: data.length };
  };
  const descs = layers.map(([name, content]) => {
    if (content !== undefined) writeFileSync(join(blobs, name), content);
    return { mediaType: 't', digest: `sha256:${name}`, size: statSync(join(blobs, name)).size };
  });
  const manifest = put(JSON.stringify({ schemaVersion: 2, config: put('{}'), layers: descs }));
  writeFileSync(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
}

it('caches pushed layers under their diff IDs and offers them to the next push', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const [base, app1, app2] = [id('a'), id('b'), id('c')];
  const l1 = join(work, 'l1');
  expect(cache.prepare(l1, [base!, app1!])).toEqual([base, app1]);
  expect(readdirSync(join(l1, 'blobs/sha256'))).toEqual([]);
  push(l1, [
    [hex('gzipped base'), 'gzipped base'],
    [hex('gzipped app one'), 'gzipped app one'],
  ]);
  cache.finish(l1, [base!, app1!]);

  // The next push finds the base under its diff ID (what buildah looks for) and reuses it.
  const l2 = join(work, 'l2');
  expect(cache.prepare(l2, [base!, app2!])).toEqual([app2]);
  expect(readFileSync(join(l2, 'blobs/sha256', base!.slice(7)), 'utf8')).toBe('gzipped base');
  push(l2, [
    [base!.slice(7), undefined],
    [hex('gzipped app two'), 'gzipped app two'],
  ]);
  cache.finish(l2, [base!, app2!]);
  expect(readdirSync(join(work, 'cache')).sort()).toEqual([base, app1, app2].map((d) => d!.slice(7)).sort());

  expect(cache.prune(60 * 60_000, Date.now())).toBe(0);
  expect(cache.prune(0, Date.now() + 1)).toBe(3);
  expect(readdirSync(join(work, 'cache'))).toEqual([]);
});

it('turns a dir: push into an OCI layout naming the same manifest and blobs', () => {
  const from = join(work, 'img.dir');
  mkdirSync(from);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
  });
  writeFileSync(join(from, 'manifest.json'), manifest);
  writeFileSync(join(from, 'version'), 'Directory Transport Version: 1.1\n');
  writeFileSync(join(from, hex('layer')), 'layer');
  LayerExport.layoutFromDir(from, join(work, 'img'));
  const index = JSON.parse(readFileSync(join(work, 'img/index.json'), 'utf8')) as {
    manifests: Array<{ digest: string; size: number }>;
  };
  expect(index.manifests).toHaveLength(1);
  expect(index.manifests[0]!.digest).toBe(`sha256:${hex(manifest)}`);
  expect(readFileSync(join(work, 'img/blobs/sha256', hex(manifest)), 'utf8')).toBe(manifest);
  expect(readFileSync(join(work, 'img/blobs/sha256', hex('layer')), 'utf8')).toBe('layer');
  expect(readdirSync(work).sort()).toEqual(['img']);
});
