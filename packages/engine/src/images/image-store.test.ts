// ImageStore.adopt: how the platform moves images of the flat layout into workspace namespaces
// (issue 19 item 2) — a hard-linked copy or a rename, the manifest's ref following, never written
// through a link the two copies share.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { ProcessRunner } from '../runner.js';
import { ImageStore } from './image-store.js';

describe('ImageStore.adopt', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-adopt-'));
    const image = join(dir, encodeURIComponent('acme/tool:1'));
    mkdirSync(join(image, 'layers/000'), { recursive: true });
    writeFileSync(join(image, 'layers/000/hello'), 'hi');
    const manifest = {
      ref: 'acme/tool:1',
      layers: ['layers/000'],
      env: [],
      workingDir: '/',
      createdAt: 'x',
      sizeBytes: 2,
    };
    writeFileSync(join(image, 'image.json'), JSON.stringify(manifest));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies with hard links, then moves; each copy names its own ref', async () => {
    const store = new ImageStore(dir, new ProcessRunner(), systemClock);
    await store.adopt('acme/tool:1', 'ws-a/acme/tool:1', 'copy');
    await store.adopt('acme/tool:1', 'ws-b/acme/tool:1', 'move');
    expect(store.refs().sort()).toEqual(['ws-a/acme/tool:1', 'ws-b/acme/tool:1']);
    for (const ref of store.refs()) {
      const resolved = store.resolve(ref);
      expect(resolved.ref).toBe(ref);
      expect(readFileSync(join(resolved.layerDirs[0]!, 'hello'), 'utf8')).toBe('hi');
    }
    const a = join(store.resolve('ws-a/acme/tool:1').layerDirs[0]!, 'hello');
    expect(statSync(a).nlink).toBe(2); // one inode, two images
    // An existing destination is left as it is.
    await store.adopt('ws-a/acme/tool:1', 'ws-b/acme/tool:1', 'move');
    expect(store.refs().sort()).toEqual(['ws-a/acme/tool:1', 'ws-b/acme/tool:1']);
  });
});
