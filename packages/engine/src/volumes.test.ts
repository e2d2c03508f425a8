// Volumes on real loop-mounted ext4: size limit, persistence across sandboxes, read-only mounts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VolumeInUseError } from './errors.js';
import type { LocalEngine } from './local-engine.js';
import { isMountPoint } from './mounts.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
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

  it('deleteVolume unmounts and removes it', async () => {
    const vol = await newVolume(8);
    await engine.deleteVolume(vol.name);
    volumes.pop();
    expect(isMountPoint(vol.path)).toBe(false);
    expect((await engine.listVolumes()).map((v) => v.name)).not.toContain(vol.name);
  });
});
