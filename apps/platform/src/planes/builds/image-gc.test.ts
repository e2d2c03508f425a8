import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ImageGc, type BuiltEntry } from './image-gc.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry = (tag: string): BuiltEntry => ({
  engineRef: `ws-1/agents/a:${tag}`,
  workspace: 'default',
  imageType: 'agents',
  name: 'a',
  tag,
});

// Issue 15: built images whose tag no record holds any more are removed; kept ones stay; images
// the platform did not build (not in the ledger) are never touched.
it('removes only ledger images whose tag is gone', async () => {
  dir = mkdtempSync(join(tmpdir(), 'i15-gc-'));
  const live = new Set(['b1']);
  const removed: string[] = [];
  let prunes = 0;
  const gc = new ImageGc({
    ledgerFile: join(dir, 'ledger.json'),
    tagExists: async (e) => live.has(e.tag),
    removeImage: (ref) => removed.push(ref),
    // The engine's shared layers are pruned after every pass (layer-store.test.ts proves which go).
    pruneLayers: () => (prunes++, 0),
    log: () => {},
  });
  gc.record(entry('b1'));
  gc.record(entry('b2'));
  expect(await gc.pass()).toBe(1);
  expect(removed).toEqual(['ws-1/agents/a:b2']);
  live.delete('b1');
  expect(await gc.pass()).toBe(1);
  expect(await gc.pass()).toBe(0);
  expect(removed).toEqual(['ws-1/agents/a:b2', 'ws-1/agents/a:b1']);
  expect(prunes).toBe(3);
});
