// Issue 4 "Restart safety": stopping the platform (SIGTERM, and kill -9) keeps running sandboxes
// running — a background counter never stops — and a restarted platform on the same home re-attaches
// to them: RUNNING ones answer through the gateway, STANDBY ones stay frozen until used, files
// written before the restart are there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  exec,
  getSandbox,
  missingCapability,
  sbx,
  spawnProcess,
  startSandboxPlatform,
  upperFile,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
// Written to a new file and renamed over the old one: `echo > /tmp/count` alone truncates before it
// writes, and a read from the host in between saw an empty file (CI did, twice).
const COUNTER = `sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.1; done'`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing !== null)(`platform restart${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let home = '';
  let counterId = '';
  const env = { TARMAC_STANDBY_AFTER: '3s' };

  beforeAll(async () => {
    p = await startSandboxPlatform({ env });
    home = p.home;
  }, 15 * 60_000);

  afterAll(() => cleanUp(p, ['alive', 'sleeper']), 120_000);

  it('sets up a counting sandbox and a STANDBY one', async () => {
    const before = new Set(engineIds(home));
    await createSandbox(p!, 'alive');
    counterId = engineIds(home).find((x) => !before.has(x))!;
    await spawnProcess(p!, 'alive', COUNTER, { name: 'counter', keepAlive: true, timeout: 0 });
    await exec(p!, 'alive', 'echo precious > /root/work.txt');
    await createSandbox(p!, 'sleeper');
    await exec(p!, 'sleeper', 'echo dreaming > /tmp/dream');
    await waitSandbox(p!, 'sleeper', (s) => s.state === 'STANDBY', 'sleeper STANDBY', 20_000);
  });

  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`keeps sandboxes alive across ${signal} of the platform and re-attaches`, async () => {
      const count = () => Number(upperFile(home, counterId, 'tmp/count'));
      await p!.stop(signal);
      const during = count();
      await sleep(1000);
      expect(count()).toBeGreaterThan(during); // still counting with no platform at all

      p = await startSandboxPlatform({ home, env });
      const alive = await getSandbox(p, 'alive');
      expect(alive.status).toBe('DEPLOYED');
      expect(alive.state).toBe('RUNNING');
      const sleeper = await getSandbox(p, 'sleeper');
      expect(sleeper.status).toBe('DEPLOYED');
      expect(sleeper.state).toBe('STANDBY');

      expect((await exec(p, 'alive', 'cat /root/work.txt')).stdout?.trim()).toBe('precious');
      const ps = await exec(p, 'alive', 'ps -eo args');
      expect(ps.stdout).toContain('while true'); // the very same process
      expect((await sbx(p, 'sleeper', '/health')).status).toBe(200); // resumed on use
      expect((await exec(p, 'sleeper', 'cat /tmp/dream')).stdout?.trim()).toBe('dreaming');
      await waitSandbox(p, 'sleeper', (s) => s.state === 'STANDBY', 'sleeper back in STANDBY', 20_000);
    });
  }

  it('marks a sandbox whose container died while the platform was down FAILED, never DEPLOYED', async () => {
    await p!.stop('SIGKILL');
    const { execFileSync } = await import('node:child_process');
    execFileSync('runc', ['--root', '/run/tarmac/runc', 'kill', '--all', counterId, 'KILL']);
    p = await startSandboxPlatform({ home, env });
    const s = await waitSandbox(p, 'alive', (x) => x.status === 'FAILED', 'alive FAILED', 15_000);
    expect(s.events.at(-1)?.message).toMatch(/stopped/);
  });
});
