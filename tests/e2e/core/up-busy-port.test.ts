// Issue 14 item 9: a second `tarmac up` on a port another platform holds. It used to start a
// second egress proxy and the sandbox controllers, then print a stack trace. Now it checks the
// port before starting anything: one line naming the port, a non-zero exit, nothing created (not
// even its home), no process left in its group, and the first platform untouched.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, freePort, removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';

const NETWORK = { TARMAC_BRIDGE: 'tarmacbusy0', TARMAC_SUBNET: '10.160.0.0/16' };

describe('a second `tarmac up` on a busy port', () => {
  let first: RunningPlatform;
  const scratch = mkdtempSync(join(tmpdir(), 'tarmac-busy-'));

  beforeAll(async () => {
    first = await startPlatform({ env: { ...NETWORK } });
  }, 120_000);
  afterAll(async () => {
    expect(await first?.stop()).toBe(0);
    if (first) removeHome(first.home);
    removeHome(scratch);
  }, 60_000);

  it('fails with one line naming the port, exits non-zero, and starts nothing', async () => {
    const home = join(scratch, 'second-home');
    const egressPort = await freePort();
    // Its own process group: afterwards, no process of it (proxy, runc helper, child) may remain.
    const second = spawn(process.execPath, [CLI_MAIN, 'up', '--port', String(first.port), '--home', home], {
      env: { ...process.env, ...NETWORK, TARMAC_EGRESS_PORT: String(egressPort), TARMAC_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    second.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    second.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code, stderr).toBe(1);
    expect(stderr.trim().split('\n'), stderr).toEqual([
      `tarmac: port ${first.port} on 127.0.0.1 is already in use (is another tarmac up running?); choose another with --port`,
    ]);
    expect(stdout).not.toContain('egress proxy listening');
    expect(existsSync(home)).toBe(false);
    const group = spawnSync('ps', ['-o', 'pid=,args=', '-g', String(second.pid)], { encoding: 'utf8' });
    expect(group.stdout.trim()).toBe('');
    // The first platform still serves.
    expect((await first.api('/v0/workspaces')).status).toBe(200);
  }, 60_000);
});
