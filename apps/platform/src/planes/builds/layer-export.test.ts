// The layer-blob cache between buildah and the engine (layer-export.ts), on layouts shaped as
// `buildah build -t oci:<dir>:image` writes them: uncompressed layers named by their digest, a
// blob the layout already holds not written again.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LayerExport, layoutComplete } from './layer-export.js';

const hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const TAR = 'application/vnd.oci.image.layer.v1.tar';
const GZIP = `${TAR}+gzip`;

let work = '';
beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'tarmac-export-'))));
afterEach(() => rmSync(work, { recursive: true, force: true }));

/**
 * What the build leaves in `layout`: each layer's content and media type; a layer whose blob the
 * layout already holds is not written (as buildah skips it).
 */
function build(layout: string, layers: Array<[string, string]>): string[] {
  const blobs = join(layout, 'blobs', 'sha256');
  const put = (data: string) => {
    if (!existsSync(join(blobs, hex(data)))) writeFileSync(join(blobs, hex(data)), data);
    return { digest: `sha256:${hex(data)}`, size: data.length };
  };
  const descs = layers.map(([content, mediaType]) => ({ mediaType, ...put(content) }));
  const manifest = put(JSON.stringify({ schemaVersion: 2, config: put('{}'), layers: descs }));
  writeFileSync(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
  return descs.map((d) => d.digest);
}

it('caches built layers by digest and links them into the next layout, which reuses them', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const l1 = join(work, 'l1');
  expect(cache.prepare(l1).size).toBe(0);
  const [base, app1] = build(l1, [
    ['base layer', TAR],
    ['app one', TAR],
  ]);
  expect(cache.finish(l1, new Set())).toEqual({ layers: 2, reused: 0 });
  expect(readdirSync(join(work, 'cache')).sort()).toEqual([base, app1].map((d) => d!.slice(7)).sort());

  // The next layout holds the cached blobs (hard links): the build writes only its new layer.
  const l2 = join(work, 'l2');
  const offered = cache.prepare(l2);
  expect([...offered].sort()).toEqual([base, app1].sort());
  expect(readFileSync(join(l2, 'blobs/sha256', base!.slice(7)), 'utf8')).toBe('base layer');
  build(l2, [
    ['base layer', TAR],
    ['app two', TAR],
  ]);
  expect(cache.finish(l2, offered)).toEqual({ layers: 2, reused: 1 });
  expect(readdirSync(join(work, 'cache'))).toHaveLength(3);

  expect(cache.prune(60 * 60_000, Date.now())).toBe(0);
  expect(cache.prune(0, Date.now() + 1)).toBe(3);
  expect(readdirSync(join(work, 'cache'))).toEqual([]);
});

it('never caches a compressed blob (a cached name is always the digest of the bytes a layer is)', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const l1 = join(work, 'l1');
  cache.prepare(l1);
  build(l1, [
    ['gzipped', GZIP],
    ['plain', TAR],
  ]);
  cache.finish(l1, new Set());
  expect(readdirSync(join(work, 'cache'))).toEqual([hex('plain')]);
});

it('offers the most recently used blobs first, at most maxOffered', () => {
  const cache = new LayerExport(join(work, 'cache'), 2);
  const l1 = join(work, 'l1');
  cache.prepare(l1);
  const digests = build(l1, [
    ['a', TAR],
    ['b', TAR],
    ['c', TAR],
  ]);
  cache.finish(l1, new Set());
  // 'a' used an hour ago, 'b' a minute ago, 'c' now.
  const age = (d: string, s: number) => {
    const t = new Date(Date.now() - s * 1000);
    utimesSync(join(work, 'cache', d.slice(7)), t, t);
  };
  age(digests[0]!, 3600);
  age(digests[1]!, 60);
  expect([...cache.prepare(join(work, 'l2'))].sort()).toEqual([digests[1], digests[2]].sort());
});

it('refuses a layout that names no single image', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const l1 = join(work, 'l1');
  cache.prepare(l1);
  writeFileSync(join(l1, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [] }));
  expect(() => cache.finish(l1, new Set())).toThrow(/no single image/);
});

it('a layout is whole when its one image has its manifest, config and every layer blob', () => {
  const cache = new LayerExport(join(work, 'cache'));
  const l1 = join(work, 'l1');
  cache.prepare(l1);
  expect(layoutComplete(l1)).toBe(false);
  const [, app] = build(l1, [
    ['base layer', TAR],
    ['app', TAR],
  ]);
  expect(layoutComplete(l1)).toBe(true);
  rmSync(join(l1, 'blobs/sha256', app!.slice(7)));
  expect(layoutComplete(l1)).toBe(false);
});
