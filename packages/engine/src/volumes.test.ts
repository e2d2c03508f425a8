// Volumes on real loop-mounted ext4: size limit, persistence across sandboxes, read-only mounts.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidSpecError, VolumeInUseError, VolumeNotFoundError } from './errors.js';
import type { LocalEngine } from './local-engine.js';
import { isMountPoint } from './mounts.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
/** CAP_SYS_RESOURCE (bit 24) in our effective set: ext4's online resize ioctl requires it. */
const canResizeOnline =
  (BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0'}`) >>
    24n) &
  1n
    ? true
    : false;
const home = process.env.TARMAC_ENGINE_TEST_HOME;

describe.skipIf(missing !== null)(`volumes${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const sandboxes: string[] = [];
  const volumes: string[] = [];

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(home);
    await engine.ensureImage('tarmac/base:latest');
  }, 900_000);

  afterAll(async () => {
    for (const id of sandboxes) await engine.deleteSandbox(id).catch(() => undefined);
    for (const v of volumes) await engine.deleteVolume(v).catch(() => undefined);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
  }, 60_000);

  async function start(prefix: string, volume: string, mountPath: string, readOnly = false) {
    const id = uniqueId(prefix);
    sandboxes.push(id);
    await engine.createSandbox({
      id,
      image: 'tarmac/base:latest',
      memoryMB: 512,
      volumes: [{ volume, mountPath, readOnly }],
    });
    await engine.waitReady(id, 15_000);
    return id;
  }
  const sh = (id: string, script: string) => engine.exec(id, ['sh', '-c', script], { timeoutMs: 30_000 });
  const newVolume = async (sizeMB: number) => {
    const name = uniqueId('vol');
    volumes.push(name);
    return engine.createVolume(name, sizeMB);
  };

  it('stops writes at the volume size with ENOSPC', async () => {
    const vol = await newVolume(16);
    const id = await start('vol-size', vol.name, '/data');
    const r = await sh(id, 'dd if=/dev/zero of=/data/big bs=1M count=64 2>&1; echo rc=$?; du -sm /data/big');
    expect(r.stdout).toContain('No space left on device');
    expect(r.stdout).toMatch(/rc=1/);
    const mb = Number(/(\d+)\s+\/data\/big/.exec(r.stdout)?.[1]);
    expect(mb).toBeGreaterThan(8);
    expect(mb).toBeLessThanOrEqual(16);
  }, 60_000);

  it('keeps data after the sandbox is deleted and shows it to the next sandbox', async () => {
    const vol = await newVolume(16);
    const first = await start('vol-p1', vol.name, '/work');
    await sh(first, 'echo persisted > /work/note.txt && sync');
    await expect(start('vol-busy', vol.name, '/other')).rejects.toBeInstanceOf(VolumeInUseError);
    sandboxes.pop();
    await engine.deleteSandbox(first);
    expect(isMountPoint(vol.path)).toBe(true);
    const second = await start('vol-p2', vol.name, '/mnt/again');
    expect((await sh(second, 'cat /mnt/again/note.txt')).stdout).toBe('persisted\n');
    await expect(engine.deleteVolume(vol.name)).rejects.toBeInstanceOf(VolumeInUseError);
  }, 60_000);

  it('mounts read-only when asked', async () => {
    const vol = await newVolume(16);
    const writer = await start('vol-rw', vol.name, '/data');
    await sh(writer, 'echo from-writer > /data/f');
    await engine.deleteSandbox(writer);
    const reader = await start('vol-ro', vol.name, '/data', true);
    const r = await sh(reader, 'cat /data/f; (echo x > /data/g) 2>&1; echo rc=$?');
    expect(r.stdout).toContain('from-writer');
    expect(r.stdout).toMatch(/Read-only file system/);
    expect(r.stdout).toMatch(/rc=[12]/);
  }, 60_000);

  // Online ext4 growth needs CAP_SYS_RESOURCE, which some hosts (containers) drop from the
  // bounding set; there the engine grows detached volumes offline and refuses attached ones.
  it(`grows while a sandbox has it mounted${canResizeOnline ? '' : ' (this host lacks CAP_SYS_RESOURCE: refused until detached)'}`, async () => {
    const vol = await newVolume(16);
    const id = await start('vol-grow', vol.name, '/data');
    await sh(id, 'dd if=/dev/zero of=/data/first bs=1M count=10 && sync');
    if (!canResizeOnline) {
      await expect(engine.growVolume(vol.name, 48)).rejects.toBeInstanceOf(VolumeInUseError);
      expect((await engine.listVolumes()).find((v) => v.name === vol.name)?.sizeMB).toBe(16);
      const still = await sh(id, 'cat /data/first | wc -c; echo ok > /data/after && cat /data/after');
      expect(still.stdout).toBe(`${10 * 1024 * 1024}\nok\n`);
      return;
    }
    expect(await engine.growVolume(vol.name, 48)).toMatchObject({ name: vol.name, sizeMB: 48 });
    await expectGrownTo48(id);
  }, 60_000);

  it('grows a detached volume; the next sandbox writes past the old size, ENOSPC past the new', async () => {
    const vol = await newVolume(16);
    const first = await start('vol-g1', vol.name, '/data');
    await sh(first, 'dd if=/dev/zero of=/data/first bs=1M count=10 && sync');
    await engine.deleteSandbox(first);
    const grown = await engine.growVolume(vol.name, 48);
    expect(grown).toMatchObject({ name: vol.name, sizeMB: 48, path: vol.path });
    expect(isMountPoint(vol.path)).toBe(true);
    expect((await engine.listVolumes()).find((v) => v.name === vol.name)?.sizeMB).toBe(48);
    await expectGrownTo48(await start('vol-g2', vol.name, '/data'));
  }, 60_000);

  /** /data/first (10 MB) is intact; 20 MB more (past the old 16) fits; the rest stops at 48. */
  async function expectGrownTo48(id: string) {
    const more = await sh(id, 'dd if=/dev/zero of=/data/second bs=1M count=20 2>&1; echo rc=$?; sync');
    expect(more.stdout, more.stdout).toMatch(/rc=0/);
    const full = await sh(id, 'dd if=/dev/zero of=/data/third bs=1M count=64 2>&1; echo rc=$?; du -sm /data');
    expect(full.stdout).toContain('No space left on device');
    expect(full.stdout).toMatch(/rc=1/);
    const total = Number(/(\d+)\s+\/data/.exec(full.stdout)?.[1]);
    expect(total).toBeGreaterThan(40);
    expect(total).toBeLessThanOrEqual(48);
    expect((await sh(id, 'cat /data/first | wc -c')).stdout.trim()).toBe(String(10 * 1024 * 1024));
  }

  it('growVolume never shrinks and treats the same size as a no-op', async () => {
    const vol = await newVolume(16);
    await expect(engine.growVolume(vol.name, 8)).rejects.toBeInstanceOf(InvalidSpecError);
    expect(await engine.growVolume(vol.name, 16)).toMatchObject({ sizeMB: 16 });
    await expect(engine.growVolume(uniqueId('nope'), 32)).rejects.toBeInstanceOf(VolumeNotFoundError);
  });

  it('deleteVolume unmounts and removes it', async () => {
    const vol = await newVolume(8);
    await engine.deleteVolume(vol.name);
    volumes.pop();
    expect(isMountPoint(vol.path)).toBe(false);
    expect((await engine.listVolumes()).map((v) => v.name)).not.toContain(vol.name);
  });
});
