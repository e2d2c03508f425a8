// resize on real runc: a live sandbox gets a new memory (and CPU) limit with its processes still
// running, frozen or not; the kernel's refusal (more in use than the new limit) keeps the old one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalEngine } from './local-engine.js';
import { cpuQuota } from './oci-spec.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
const MiB = 1024 * 1024;

describe.skipIf(missing !== null)(`LocalEngine.resize${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const created: string[] = [];

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(process.env.TARMAC_ENGINE_TEST_HOME);
    await engine.ensureImage('tarmac/base:latest');
  }, 900_000);

  afterAll(async () => {
    for (const id of created) await engine.deleteSandbox(id).catch(() => undefined);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
  }, 60_000);

  async function start(prefix: string, memoryMB: number) {
    const id = uniqueId(prefix);
    created.push(id);
    const info = await engine.createSandbox({ id, image: 'tarmac/base:latest', memoryMB });
    await engine.waitReady(id, 10_000);
    return info;
  }
  const sh = async (id: string, script: string) =>
    (await engine.exec(id, ['sh', '-c', script], { timeoutMs: 20_000 })).stdout.trim();
  const cpuQuotaInside = (id: string) =>
    sh(id, 'cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d" " -f1 /sys/fs/cgroup/cpu.max');

  it('changes memory and CPU in place: same init, same processes, new limits seen inside', async () => {
    const info = await start('resize', 1024);
    await sh(info.id, "nohup sh -c 'sleep 600' >/dev/null 2>&1 &");
    const sleeper = await sh(info.id, 'pgrep -x sleep');
    expect(sleeper).toMatch(/^\d+$/);

    const grown = await engine.resize(info.id, 3072);
    expect(grown.memoryMB).toBe(3072);
    expect((await engine.stats(info.id)).memoryLimitBytes).toBe(3072 * MiB);
    expect(await cpuQuotaInside(info.id)).toBe(String(cpuQuota(3072)));

    const shrunk = await engine.resize(info.id, 512);
    expect(shrunk.memoryMB).toBe(512);
    expect((await engine.stats(info.id)).memoryLimitBytes).toBe(512 * MiB);
    expect(await cpuQuotaInside(info.id)).toBe(String(cpuQuota(512)));

    const after = await engine.inspect(info.id);
    expect(after.pid).toBe(info.pid);
    expect(after.memoryMB).toBe(512); // what a re-attaching engine reads
    expect(await sh(info.id, 'pgrep -x sleep')).toBe(sleeper);
  }, 60_000);

  it('a start-up CPU boost: more cores until endCpuBoost, then memoryMB / 2048 again (run plane replicas)', async () => {
    const id = uniqueId('boost');
    created.push(id);
    await engine.createSandbox({ id, image: 'tarmac/base:latest', memoryMB: 256, startupCpuCores: 1 });
    await engine.waitReady(id, 10_000);
    expect(await cpuQuotaInside(id)).toBe('100000'); // 1 core over the 100 ms period
    engine.endCpuBoost(id);
    expect(await cpuQuotaInside(id)).toBe(String(cpuQuota(256))); // 1/8 core
  }, 60_000);

  it('resizes a frozen sandbox, which stays frozen', async () => {
    const info = await start('resize-frozen', 1024);
    await engine.freeze(info.id);
    await engine.resize(info.id, 2048);
    const stats = await engine.stats(info.id);
    expect(stats.memoryLimitBytes).toBe(2048 * MiB);
    expect(stats.frozen).toBe(true);
    await engine.thaw(info.id);
  }, 60_000);

  it('refuses a limit below what is in use and keeps the old one', async () => {
    const info = await start('resize-busy', 1024);
    // Holds ~300 MB of touched memory; there is no swap to push it to.
    await sh(
      info.id,
      "nohup python3 -c 'import time; b = bytearray(300 * 1024 * 1024); time.sleep(600)' >/dev/null 2>&1 &",
    );
    const deadline = Date.now() + 15_000;
    while ((await engine.stats(info.id)).memoryBytes < 300 * MiB) {
      if (Date.now() > deadline) throw new Error('the memory hog did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    await expect(engine.resize(info.id, 128)).rejects.toThrow(/runc update/);
    expect((await engine.stats(info.id)).memoryLimitBytes).toBe(1024 * MiB);
    expect((await engine.inspect(info.id)).memoryMB).toBe(1024);
    expect(await cpuQuotaInside(info.id)).toBe(String(cpuQuota(1024)));
    expect(await sh(info.id, 'pgrep -x python3')).toMatch(/^\d+$/); // not OOM-killed
  }, 60_000);

  it('rejects a limit under 64 MB before touching the sandbox', async () => {
    const info = await start('resize-bad', 256);
    await expect(engine.resize(info.id, 10)).rejects.toThrow(/memoryMB/);
    expect((await engine.inspect(info.id)).memoryMB).toBe(256);
  }, 30_000);
});
