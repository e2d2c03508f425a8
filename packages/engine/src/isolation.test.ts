// Isolation on real runc: processes, network, host files, memory and pids limits.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from './health.js';
import type { LocalEngine } from './local-engine.js';
import {
  ensureSandboxdBundle,
  missingCapability,
  testEngine,
  TEST_NETWORK,
  uniqueId,
} from './test-support/harness.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME;
const GATEWAY = TEST_NETWORK.subnet.replace(/\.0\/\d+$/, '.1');

describe.skipIf(missing !== null)(`sandbox isolation${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const created: string[] = [];
  let secretDir = '';
  let hostServer: Server;
  let hostPort = 0;

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(home);
    await engine.ensureImage('tarmac/base:latest');
    secretDir = mkdtempSync(join(tmpdir(), 'tarmac-secret-'));
    writeFileSync(join(secretDir, 'tarmac.db'), 'platform-database-secret');
    // Stands in for the platform's other services, listening on every host address.
    hostServer = createServer((_req, res) => res.end('host-service'));
    await new Promise<void>((r) => hostServer.listen(0, '0.0.0.0', r));
    hostPort = (hostServer.address() as AddressInfo).port;
  }, 900_000);

  afterAll(async () => {
    for (const id of created) await engine.deleteSandbox(id).catch(() => undefined);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
    rmSync(secretDir, { recursive: true, force: true });
    hostServer.close();
  }, 60_000);

  async function start(prefix: string, memoryMB = 1024, pidsLimit?: number) {
    const id = uniqueId(prefix);
    created.push(id);
    const info = await engine.createSandbox({ id, image: 'tarmac/base:latest', memoryMB, pidsLimit });
    await engine.waitReady(id, 15_000);
    return info;
  }
  const sh = (id: string, script: string, timeoutMs = 20_000) =>
    engine.exec(id, ['sh', '-c', script], { timeoutMs });

  it('cannot see host processes or another sandbox’s processes', async () => {
    const a = await start('iso-pa');
    const b = await start('iso-pb');
    await sh(a.id, 'nohup sleep 31337 >/dev/null 2>&1 &');
    const psB = (await sh(b.id, 'ps -eo pid,args')).stdout;
    expect(psB).not.toContain('sleep 31337');
    expect(psB).not.toContain('vitest');
    // Only tini, sandboxd, and the exec'd shell/ps: a handful of pids starting at 1.
    const pids = psB.trim().split('\n').slice(1);
    expect(pids.length).toBeLessThan(8);
    expect(psB).toMatch(/^\s*1\s+\/\.tarmac\/bin\/tini/m);
    expect((await sh(a.id, 'ps -eo args')).stdout).toContain('sleep 31337');
  }, 60_000);

  it('cannot reach another sandbox, the host’s services or the outside; the host reaches both', async () => {
    const a = await start('iso-na');
    const b = await start('iso-nb');
    expect(await probe(`http://${a.ip}:8080/health`)).toBe(true);
    expect(await probe(`http://${b.ip}:8080/health`)).toBe(true);
    const curl = (url: string) => `curl -s -m 1 -o /dev/null -w "%{http_code}" ${url}; echo " rc=$?"`;
    const toB = await sh(a.id, curl(`http://${b.ip}:8080/health`));
    expect(toB.stdout).not.toMatch(/^200/);
    expect(toB.stdout).toMatch(/rc=(7|28)/); // 7 = connect failed, 28 = timed out
    const toHost = await sh(a.id, curl(`http://${GATEWAY}:${hostPort}/`));
    expect(toHost.stdout).toMatch(/rc=(7|28)/);
    // No default route: anything off the bridge subnet is unreachable at once.
    const route = await sh(a.id, 'cat /proc/net/route');
    expect(route.stdout).not.toMatch(/\n\S+\s+00000000\s/);
    const out = await sh(a.id, curl('http://192.0.2.1:80/'));
    expect(out.stdout).toMatch(/rc=7/);
    // Its own loopback works.
    expect((await sh(a.id, curl('http://127.0.0.1:8080/health'))).stdout).toMatch(/^200/);
  }, 60_000);

  it('cannot read host files (a stand-in for the platform database)', async () => {
    const a = await start('iso-fs');
    const r = await sh(
      a.id,
      `cat ${join(secretDir, 'tarmac.db')} 2>&1; ls / ; cat /proc/1/root/${secretDir}/tarmac.db 2>&1`,
    );
    expect(r.stdout).not.toContain('platform-database-secret');
    expect(r.stdout).toContain('No such file');
    // Capabilities are runc's default set: no CAP_SYS_ADMIN, so no mounting the host disk.
    const mount = await sh(a.id, 'mkdir -p /mnt/x && mount -t proc proc /mnt/x 2>&1; echo rc=$?');
    expect(mount.stdout).toMatch(/rc=(1|32)/);
    const status = await sh(a.id, 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status');
    expect(status.stdout).toMatch(/NoNewPrivs:\s+1/);
    // runc's default set without CAP_NET_RAW (bit 13, issue 19 item 3).
    expect(status.stdout).toMatch(/CapEff:\s+00000000a80405fb/);
  }, 60_000);

  it('a memory hog is OOM-killed inside its cgroup, inspect says so, and a neighbour is unaffected', async () => {
    const hog = await start('iso-oom', 256);
    const neighbour = await start('iso-nbr');
    const r = await sh(
      hog.id,
      'python3 -c "a=[]\nwhile True: a.append(bytearray(8*1024*1024))"; echo rc=$?',
      60_000,
    );
    expect(r.stdout).toMatch(/rc=137/); // SIGKILL from the OOM killer
    const info = await engine.inspect(hog.id);
    expect(info.oomKilled).toBe(true);
    expect(info.status).toBe('RUNNING'); // sandboxd survived: only the hog died
    expect(await probe(`http://${hog.ip}:8080/health`)).toBe(true);
    expect(await probe(`http://${neighbour.ip}:8080/health`)).toBe(true);
    expect((await engine.inspect(neighbour.id)).oomKilled).toBe(false);
    // Stopped later, the reason still carries the OOM flag for the platform's FAILED event.
    const stopped = await engine.stopSandbox(hog.id, 1);
    expect(stopped.oomKilled).toBe(true);
  }, 90_000);

  it('a fork bomb is contained by the pids limit', async () => {
    const bomb = await start('iso-fork', 1024, 64);
    const neighbour = await start('iso-fnb');
    await sh(bomb.id, "nohup bash -c 'f(){ f | f & }; f' >/dev/null 2>&1 &");
    await new Promise((r) => setTimeout(r, 2000));
    const stats = await engine.stats(bomb.id);
    expect(stats.pids).toBeLessThanOrEqual(64);
    expect(stats.pids).toBeGreaterThan(32); // it really tried
    expect(await probe(`http://${neighbour.ip}:8080/health`)).toBe(true);
    const t = performance.now();
    await engine.deleteSandbox(bomb.id);
    console.log(`fork-bomb sandbox deleted in ${(performance.now() - t).toFixed(0)} ms`);
    expect(await engine.leftovers(bomb.id, bomb.ip)).toEqual([]);
  }, 60_000);
});
