import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessRunner } from './runner.js';
import { SnapshotStore } from './snapshots.js';

describe('SnapshotStore', () => {
  let dir: string;
  let store: SnapshotStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-snapshots-'));
    store = new SnapshotStore(join(dir, 'snapshots'), new ProcessRunner());
    mkdirSync(join(dir, 'upper', 'home'), { recursive: true });
    writeFileSync(join(dir, 'upper', 'home', 'a.txt'), 'layer');
    mkdirSync(join(dir, 'vol', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'vol', 'sub', 'v.txt'), 'volume');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies the layer and lays each volume in at its mount path', async () => {
    const bytes = await store.take('snap-1', {
      upper: join(dir, 'upper'),
      volumes: [{ path: join(dir, 'vol'), mountPath: '/data/v' }],
    });
    expect(bytes).toBeGreaterThan(0);
    const upper = store.upperOf('snap-1');
    expect(readFileSync(join(upper, 'home', 'a.txt'), 'utf8')).toBe('layer');
    expect(readFileSync(join(upper, 'data', 'v', 'sub', 'v.txt'), 'utf8')).toBe('volume');
    expect(store.ids()).toEqual(['snap-1']);
    // A copy, not a link: later writes to the source are not in it.
    writeFileSync(join(dir, 'upper', 'home', 'a.txt'), 'later');
    expect(readFileSync(join(upper, 'home', 'a.txt'), 'utf8')).toBe('layer');
    store.remove('snap-1');
    expect(store.ids()).toEqual([]);
    expect(() => store.upperOf('snap-1')).toThrow(/does not exist/);
  });

  it('refuses ids and mount paths that would leave its directory, leaving nothing behind', async () => {
    await expect(store.take('../evil', { upper: join(dir, 'upper'), volumes: [] })).rejects.toThrow(
      /invalid/,
    );
    await expect(
      store.take('snap-2', {
        upper: join(dir, 'upper'),
        volumes: [{ path: join(dir, 'vol'), mountPath: '/../../x' }],
      }),
    ).rejects.toThrow(/mountPath/);
    expect(existsSync(join(dir, 'x'))).toBe(false);
    expect(store.ids()).toEqual([]);
    await store.take('snap-3', { upper: join(dir, 'upper'), volumes: [] });
    await expect(store.take('snap-3', { upper: join(dir, 'upper'), volumes: [] })).rejects.toThrow(/exists/);
  });
});
