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

  it("sees only its own processes, not the host's or another sandbox's", async () => {
    await exec(p!, 'iso-b', 'sleep 777 >/dev/null 2>&1 &');
    const r = await exec(p!, 'iso-a', 'ps -eo pid,args');
    expect(r.stdout).not.toMatch(/dist\/main\.js|vitest|postgres|sleep 777/);
    expect(r.stdout).toMatch(/^\s*1\s+\/\.tarmac\/bin\/tini/m); // its own pid namespace: our init is pid 1
    expect(r.stdout!.trim().split('\n').length).toBeLessThan(10);
  });

  it('cannot reach another sandbox, the host services, or the platform port', async () => {
    const other = await ipOf('iso-b');
    const r = await exec(
      p!,
      'iso-a',
      // 10.202.0.1 is the host's address on the e2e bridge (E2E_NETWORK), the only host IP in reach.
      // Direct connections (--noproxy), then the same through the egress proxy every sandbox is
      // given (HTTP_PROXY), which refuses the bridge and the host (egress/ARCHITECTURE.md).
      `curl -s -m 2 --noproxy '*' http://${other}:8080/health >/dev/null; echo sandbox=$?; ` +
        `curl -s -m 2 --noproxy '*' http://10.202.0.1:${hostPort}/ ; echo host=$?; ` +
        `curl -s -m 2 --noproxy '*' http://10.202.0.1:${p!.port}/health ; echo platform=$?; ` +
        `for u in http://${other}:8080/health http://10.202.0.1:${hostPort}/ http://10.202.0.1:${p!.port}/health; do ` +
        `curl -s -m 2 -o /dev/null -w 'proxied=%{http_code} ' $u; done`,
    );
    expect(r.stdout).toMatch(/sandbox=(7|28)/);
    expect(r.stdout).toMatch(/host=(7|28)/);
    expect(r.stdout).toMatch(/platform=(7|28)/);
    expect(r.stdout).toContain('proxied=403 proxied=403 proxied=403');
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
    // Spawns sleepers until the kernel refuses (EAGAIN from the pids cgroup), then kills them all.
    const bomb = [
      'import os, signal',
      'pids = []',
      'try:',
      '    while len(pids) < 5000:',
      "        pids.append(os.posix_spawn('/bin/sleep', ['sleep', '60'], os.environ))",
      'except OSError as e:',
      "    print('refused', len(pids), e.errno)",
      'for p in pids: os.kill(p, signal.SIGKILL)',
      'for p in pids: os.waitpid(p, 0)',
    ].join('\n');
    const r = await exec(p!, 'iso-b', `python3 -c "${bomb}"`, { timeout: 60 });
    const m = /refused (\d+) 11/.exec(r.stdout ?? '');
    expect(m, r.stdout ?? '').not.toBeNull();
    expect(Number(m![1])).toBeLessThan(1024); // the pids limit (1024) counts sandboxd and the shell too
    expect((await sbx(p!, 'iso-b', '/health')).status).toBe(200); // the sandbox itself survived
    expect((await sbx(p!, 'iso-a', '/health')).status).toBe(200);
  });
});
