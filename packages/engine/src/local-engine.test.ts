// Core lifecycle on real runc: create, /health over the bridge, overlay writes, freeze/thaw,
// stop with grace, delete leaves nothing, and re-attach from a new engine instance.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageNotFoundError } from './errors.js';
import { probe } from './health.js';
import type { LocalEngine } from './local-engine.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME;

describe.skipIf(missing !== null)(`LocalEngine lifecycle${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const created: string[] = [];

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(home);
    await engine.ensureImage('tarmac/base:latest'); // first run on a machine builds it (~20 s)
  }, 900_000);

  afterAll(async () => {
    for (const id of created) await engine.deleteSandbox(id).catch(() => undefined);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
  }, 60_000);

  async function start(prefix: string, memoryMB = 1024) {
    const id = uniqueId(prefix);
    created.push(id);
    const info = await engine.createSandbox({ id, image: 'blaxel/base-image:latest', memoryMB });
    await engine.waitReady(id, 10_000);
    return info;
  }

  const sh = async (id: string, script: string) => {
    const r = await engine.exec(id, ['sh', '-c', script], { timeoutMs: 20_000 });
    return r;
  };

  it('rejects an unknown image with ImageNotFoundError before allocating anything', async () => {
    const id = uniqueId('noimg');
    await expect(engine.createSandbox({ id, image: 'nope/missing:1', memoryMB: 256 })).rejects.toBeInstanceOf(
      ImageNotFoundError,
    );
    await expect(engine.inspect(id)).rejects.toThrow(/not found/);
  });

  it('a second ensureImage of the cached base image is instant', async () => {
    const t = performance.now();
    const img = await engine.ensureImage('blaxel/base-image:latest');
    expect(img.ref).toBe('tarmac/base:latest');
    expect(performance.now() - t).toBeLessThan(50);
  });

  it('creates a sandbox whose sandboxd answers /health over the bridge IP', async () => {
    const t = performance.now();
    const info = await start('health');
    const ms = performance.now() - t;
    console.log(`create-to-ready: ${ms.toFixed(1)} ms`);
    expect(info.status).toBe('RUNNING');
    expect(info.ip).toMatch(/^10\.201\./);
    const res = await fetch(`http://${info.ip}:8080/health`);
    expect(await res.json()).toMatchObject({ status: 'ok' });
    const stats = await engine.stats(info.id);
    expect(stats.memoryLimitBytes).toBe(1024 * 1024 * 1024);
    expect(stats.pids).toBeGreaterThan(0);
    expect(stats.frozen).toBe(false);
    // Runs as PID 1 = tini in its own pid namespace, with the requested hostname.
    const ps = await sh(info.id, 'cat /proc/1/cmdline | tr "\\0" " "; echo; hostname');
    expect(ps.stdout).toMatch(/^\/\.tarmac\/bin\/tini/);
    expect(ps.stdout).toContain(info.id);
  }, 30_000);

  it('writes inside go to the sandbox upper dir, never to the image or the host', async () => {
    const info = await start('writes');
    const r = await sh(
      info.id,
      'echo hello > /usr/bin/tarmac-probe && echo x >> /etc/os-release && cat /usr/bin/tarmac-probe',
    );
    expect(r.stdout.trim()).toBe('hello');
    const layer = engine.images.resolve('tarmac/base:latest').layerDirs[0] ?? '';
    expect(existsSync(join(layer, 'usr/bin/tarmac-probe'))).toBe(false);
    expect(readFileSync(join(layer, 'etc/os-release'), 'utf8')).not.toMatch(/\nx\n$/);
    expect(existsSync('/usr/bin/tarmac-probe')).toBe(false);
    // A second sandbox from the same image sees the pristine file.
    const other = await start('writes2');
    expect((await sh(other.id, 'test -e /usr/bin/tarmac-probe; echo $?')).stdout.trim()).toBe('1');
    // The injected runtime is read-only.
    expect((await sh(info.id, 'touch /.tarmac/x 2>&1; echo $?')).stdout).toMatch(
      /Read-only file system[\s\S]*1\s*$/,
    );
  }, 30_000);

  it('freeze stops every process and thaw resumes them (a counter stops, then continues)', async () => {
    const info = await start('freeze');
    await sh(
      info.id,
      "nohup sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/counter; sleep 0.01; done' >/dev/null 2>&1 &",
    );
    const counterFile = join(info.id, 'disk/upper/tmp/counter');
    const read = () =>
      Number(readFileSync(join(engineHome(engine), 'sandboxes', counterFile), 'utf8').trim() || '0');
    await waitUntil(() => read() > 5);
    await engine.freeze(info.id);
    expect((await engine.inspect(info.id)).status).toBe('FROZEN');
    expect((await engine.stats(info.id)).frozen).toBe(true);
    const frozenAt = read();
    await new Promise((r) => setTimeout(r, 300));
    expect(read()).toBe(frozenAt);
    expect(await probe(`http://${info.ip}:8080/health`, 200)).toBe(false); // sandboxd is frozen too
    const t = performance.now();
    await engine.thaw(info.id);
    const thawMs = performance.now() - t;
    console.log(`thaw: ${(thawMs * 1000).toFixed(0)} us`);
    // The spec's bound for a resume (25 ms); the bench measures the real cost (about 1 ms), while
    // here other test files share the two cores.
    expect(thawMs).toBeLessThan(25);
    expect((await engine.inspect(info.id)).status).toBe('RUNNING');
    await waitUntil(() => read() > frozenAt);
    expect(await probe(`http://${info.ip}:8080/health`)).toBe(true);
  }, 30_000);

  it('stopSandbox sends SIGTERM to every process and waits out the grace period', async () => {
    const info = await start('stop');
    await sh(
      info.id,
      'nohup sh -c \'trap "echo got-term > /tmp/term; exit 0" TERM; touch /tmp/trapped; while true; do sleep 0.05; done\' >/dev/null 2>&1 &',
    );
    // A fixed pause raced the trap under load (CI): wait until the shell says it is installed.
    await waitUntil(() =>
      existsSync(join(engineHome(engine), 'sandboxes', info.id, 'disk/upper/tmp/trapped')),
    );
    const t = performance.now();
    const stopped = await engine.stopSandbox(info.id, 5);
    expect(performance.now() - t).toBeLessThan(4000);
    expect(stopped).toMatchObject({ status: 'STOPPED', reason: 'stopped', exitCode: 143, oomKilled: false });
    expect(readFileSync(join(engineHome(engine), 'sandboxes', info.id, 'disk/upper/tmp/term'), 'utf8')).toBe(
      'got-term\n',
    );
  }, 30_000);

  it('stopSandbox SIGKILLs after the grace period when SIGTERM is not acted on', async () => {
    const info = await start('stopkill');
    // A stopped process cannot act on SIGTERM. The bracket keeps pkill from matching its own shell.
    await sh(info.id, 'pkill -STOP -f "^/[.]tarmac/lib/ld"');
    const t = performance.now();
    const stopped = await engine.stopSandbox(info.id, 1);
    const ms = performance.now() - t;
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(ms).toBeLessThan(4000);
    expect(stopped).toMatchObject({ status: 'STOPPED', exitCode: 137 });
  }, 30_000);

  it('deleteSandbox removes container, mounts, cgroups, netns, veth and the IP lease', async () => {
    const info = await start('delete');
    await engine.freeze(info.id); // deleting a frozen sandbox must work too
    await engine.deleteSandbox(info.id);
    expect(await engine.leftovers(info.id, info.ip)).toEqual([]);
    expect(existsSync(join(engineHome(engine), 'sandboxes', info.id))).toBe(false);
    expect((await engine.list()).map((s) => s.id)).not.toContain(info.id);
  }, 30_000);

  it('a new engine instance on the same home re-attaches to running and frozen sandboxes', async () => {
    const running = await start('reattach-run');
    const frozen = await start('reattach-frz');
    await engine.freeze(frozen.id);
    const fresh = testEngine(home);
    const byId = new Map((await fresh.list()).map((s) => [s.id, s]));
    expect(byId.get(running.id)?.status).toBe('RUNNING');
    expect(byId.get(frozen.id)?.status).toBe('FROZEN');
    expect((await fresh.inspect(running.id)).pid).toBe(running.pid);
    await fresh.thaw(frozen.id);
    expect(await probe(`http://${frozen.ip}:8080/health`)).toBe(true);
    // New sandboxes from the fresh instance never reuse a leased address.
    const third = uniqueId('reattach-new');
    created.push(third);
    const info = await fresh.createSandbox({ id: third, image: 'tarmac/base', memoryMB: 512 });
    expect([running.ip, frozen.ip]).not.toContain(info.ip);
  }, 30_000);
});

function engineHome(e: LocalEngine): string {
  return (e as unknown as { opts: { home: string } }).opts.home;
}

async function waitUntil(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!safe(cond)) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function safe(cond: () => boolean): boolean {
  try {
    return cond();
  } catch {
    return false;
  }
}
