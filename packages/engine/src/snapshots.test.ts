import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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
    expect(statSync(join(dir, 'snapshots')).mode & 0o777).toBe(0o700); // setuid copies: root only
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

describe('SnapshotStore against a hostile writable layer', () => {
  let dir: string;
  let store: SnapshotStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-snapshots-attack-'));
    store = new SnapshotStore(join(dir, 'snapshots'), new ProcessRunner());
    mkdirSync(join(dir, 'host'));
    writeFileSync(join(dir, 'host', 'passwd'), 'root:x:0:0');
    mkdirSync(join(dir, 'upper'));
    mkdirSync(join(dir, 'vol'));
    writeFileSync(join(dir, 'vol', 'payload'), 'owned');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('does not follow a symlink the sandbox left where a mount path’s ancestor is', async () => {
    // The sandbox renamed /data away and made /data a link to a host directory.
    symlinkSync(join(dir, 'host'), join(dir, 'upper', 'data'));
    await store.take('snap-a', {
      upper: join(dir, 'upper'),
      volumes: [{ path: join(dir, 'vol'), mountPath: '/data/v' }],
    });
    expect(readdirSync(join(dir, 'host'))).toEqual(['passwd']); // nothing written through the link
    const copied = join(store.upperOf('snap-a'), 'data');
    expect(lstatSync(copied).isDirectory()).toBe(true);
    expect(readFileSync(join(copied, 'v', 'payload'), 'utf8')).toBe('owned');
  });

  it('does not write volume files through a link the layer left under the mount path', async () => {
    // The layer (hidden under the mount in the live sandbox) has a link to a host file where the
    // volume has a file of that name.
    mkdirSync(join(dir, 'upper', 'data'));
    symlinkSync(join(dir, 'host', 'passwd'), join(dir, 'upper', 'data', 'passwd'));
    writeFileSync(join(dir, 'vol', 'passwd'), 'attacker');
    await store.take('snap-b', {
      upper: join(dir, 'upper'),
      volumes: [{ path: join(dir, 'vol'), mountPath: '/data' }],
    });
    expect(readFileSync(join(dir, 'host', 'passwd'), 'utf8')).toBe('root:x:0:0');
    // As the live sandbox saw it: the volume's file at /data (the layer's entries were hidden).
    const copied = join(store.upperOf('snap-b'), 'data', 'passwd');
    expect(lstatSync(copied).isFile()).toBe(true);
    expect(readFileSync(copied, 'utf8')).toBe('attacker');
  });
});
