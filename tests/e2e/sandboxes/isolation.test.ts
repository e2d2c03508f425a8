// Issue 4 "What it must show", isolation at the platform level: a sandbox cannot read host files
// (the platform's database and keys), cannot see host or other sandboxes' processes, cannot reach
// another sandbox, the host's other services or the platform's port; a memory hog is OOM-killed
// inside its own cgroup (the event says so) without harming its neighbour; a fork bomb is contained.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  getSandbox,
  missingCapability,
  sbx,
  startSandboxPlatform,
  waitSandbox,
} from './support.js';

const missing = missingCapability();

describe.skipIf(missing !== null)(`sandbox isolation${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let hostService: Server | undefined;
  let hostPort = 0;
  const names = ['iso-a', 'iso-b'];

  beforeAll(async () => {
    p = await startSandboxPlatform();
    // A service on every host address, which a sandbox must not reach.
    hostService = createServer((s) => s.end('host-secret\n'));
    await new Promise<void>((r) => hostService!.listen(0, '0.0.0.0', r));
    hostPort = (hostService.address() as { port: number }).port;
    await createSandbox(p, 'iso-a', {}, { memory: 256 });
    await createSandbox(p, 'iso-b', {}, { memory: 256 });
  }, 15 * 60_000);

  afterAll(async () => {
    hostService?.close();
    await cleanUp(p, names);
  }, 120_000);

  const ipOf = async (name: string) =>
    (await exec(p!, name, "hostname -I | awk '{print $1}'")).stdout!.trim();

  it('cannot read the host filesystem: the platform database and keys are not there', async () => {
    const r = await exec(
      p!,
      'iso-a',
      `ls ${p!.home} 2>&1; cat ${p!.home}/credentials.json 2>&1; ls /etc/tarmac 2>&1; echo done`,
    );
    expect(r.stdout).not.toContain(p!.credentials.apiKey);
    expect(r.stdout).toMatch(/No such file or directory/);
  });

  it('sees only its own processes', async () => {
    const r = await exec(p!, 'iso-a', 'ps -eo pid,args');
    expect(r.stdout).not.toMatch(/tarmac|main\.js|vitest|postgres/);
    expect(r.stdout).toMatch(/^\s*1\s/m); // its own pid namespace, init is pid 1
  });

  it('cannot reach another sandbox, the host services, or the platform port', async () => {
    const other = await ipOf('iso-b');
    const r = await exec(
      p!,
      'iso-a',
      // 10.202.0.1 is the host's address on the e2e bridge (E2E_NETWORK), the only host IP in reach.
      `curl -s -m 2 http://${other}:8080/health >/dev/null; echo sandbox=$?; ` +
        `curl -s -m 2 http://10.202.0.1:${hostPort}/ ; echo host=$?; ` +
        `curl -s -m 2 http://10.202.0.1:${p!.port}/health ; echo platform=$?`,
    );
    expect(r.stdout).toMatch(/sandbox=(7|28)/);
    expect(r.stdout).toMatch(/host=(7|28)/);
    expect(r.stdout).toMatch(/platform=(7|28)/);
    expect(r.stdout).not.toContain('host-secret');
  });

  it('OOM-kills a memory hog inside its cgroup, says so in an event, and leaves the neighbour alone', async () => {
    const hog = await exec(
      p!,
      'iso-a',
      `python3 -c "b=[]\nwhile True: b.append(bytearray(16*1024*1024))"; echo exit=$?`,
    );
    expect(hog.stdout).toMatch(/exit=137/);
    const s = await waitSandbox(
      p!,
      'iso-a',
      (x) => x.events.some((e) => /OOM/.test(e.message)),
      'OOM event',
      10_000,
    );
    expect(s.status).toBe('DEPLOYED'); // sandboxd survived: only the hog died
    expect((await sbx(p!, 'iso-b', '/health')).status).toBe(200);
    expect((await getSandbox(p!, 'iso-b')).events.some((e) => /OOM/.test(e.message))).toBe(false);
  });

  it('contains a fork bomb with the pids limit', async () => {
    const r = await exec(
      p!,
      'iso-b',
      `sh -c 'for i in $(seq 1 3000); do sleep 30 & done 2>/dev/null; echo started' 2>&1 | tail -1; ` +
        `ps -e --no-headers | wc -l; pkill sleep; echo done`,
      { timeout: 60 },
    );
    const count = Number(r.stdout?.split('\n').find((l) => /^\s*\d+\s*$/.test(l)));
    expect(count).toBeLessThanOrEqual(1024);
    expect((await sbx(p!, 'iso-a', '/health')).status).toBe(200);
  });
});
