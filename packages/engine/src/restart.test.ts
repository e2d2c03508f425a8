// Restart safety: sandboxes outlive the process that created them, whether it gets SIGTERM or
// SIGKILL, and a new engine re-attaches to them (running stays running, frozen stays frozen).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from './engine.js';
import { probe } from './health.js';
import type { LocalEngine } from './local-engine.js';
import {
  DEFAULT_TEST_HOME,
  REPO_ROOT,
  ensureSandboxdBundle,
  missingCapability,
  testEngine,
  uniqueId,
} from './test-support/harness.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME ?? DEFAULT_TEST_HOME;

/** Runs the stand-in platform, waits for its sandbox, then kills it with `signal`. */
async function createThenDie(id: string, signal: NodeJS.Signals, freeze: boolean): Promise<SandboxInfo> {
  const script = join(REPO_ROOT, 'packages/engine/src/test-support/platform-stand-in.ts');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, home, id, ...(freeze ? ['freeze'] : [])],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  child.kill(signal);
  await once(child, 'exit');
  return JSON.parse(line) as SandboxInfo;
}

describe.skipIf(missing !== null)(`restart safety${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const created: string[] = [];

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(home);
    await engine.ensureImage('tarmac/base:latest');
  }, 900_000);

  afterAll(async () => {
    for (const id of created) await engine.deleteSandbox(id).catch(() => undefined);
    // This file's sandboxes are made by child processes that die on purpose (createThenDie), so
    // they never release the bridge they may have made: join its users and leave, and the last
    // user removes it (a dead user does not count).
    await engine.network
      .ensure()
      .then(() => engine.network.release())
      .catch(() => false);
  }, 60_000);

  it('a sandbox keeps running after its creator is killed with SIGKILL, and is re-attached', async () => {
    const id = uniqueId('rs-kill');
    created.push(id);
    const info = await createThenDie(id, 'SIGKILL', false);
    await new Promise((r) => setTimeout(r, 200));
    const now = await testEngine(home).inspect(id);
    expect(now).toMatchObject({ status: 'RUNNING', pid: info.pid, ip: info.ip });
    expect(await probe(`http://${info.ip}:8080/health`)).toBe(true);
  }, 60_000);

  it('a frozen sandbox stays frozen after its creator exits on SIGTERM, and thaws on demand', async () => {
    const id = uniqueId('rs-term');
    created.push(id);
    const info = await createThenDie(id, 'SIGTERM', true);
    const fresh = testEngine(home);
    expect((await fresh.list()).find((s) => s.id === id)?.status).toBe('FROZEN');
    await fresh.thaw(id);
    expect(await probe(`http://${info.ip}:8080/health`)).toBe(true);
  }, 60_000);
});
