// The container boundary of issue 19 items 3 (caps), 5, 9 and 13 on real runc: each test performs
// the attack the probe made and asserts it no longer gets through.
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsufficientCapacityError } from './errors.js';
import type { LocalEngine } from './local-engine.js';
import { DEFAULT_CAPS } from './oci-spec.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';
import { DEFAULT_ID_RANGE } from './userns.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME;
const CAP_NET_RAW = 13;
/** A bridge of this file's own: other test files rewrite the shared test bridge's filters. */
const NETWORK = { bridge: 'tarmachrd0', subnet: '10.218.0.0/16' };

describe.skipIf(missing !== null)(`sandbox hardening${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  const created: string[] = [];
  const engines: [LocalEngine, string][] = [];
  let id = '';

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(home, { nofileLimit: 2048, network: NETWORK });
    await engine.ensureImage('tarmac/base:latest');
    await engine.network.ensure();
    id = uniqueId('hard');
    created.push(id);
    await engine.createSandbox({ id, image: 'tarmac/base:latest', memoryMB: 512, diskMB: 256 });
    await engine.waitReady(id, 15_000);
  }, 900_000);

  afterAll(async () => {
    for (const c of created) await engine.deleteSandbox(c).catch(() => undefined);
    for (const [e, h] of engines) {
      for (const s of await e.list()) await e.deleteSandbox(s.id).catch(() => undefined);
      await e.network.release().catch(() => false);
      rmSync(h, { recursive: true, force: true });
    }
    await engine.network.release().catch(() => false); // this file's bridge, once nothing is on it
  }, 60_000);

  const run = async (script: string) => {
    const r = await engine.exec(id, ['sh', '-c', `${script}; echo "rc=$?"`], { timeoutMs: 30_000 });
    return r.stdout + r.stderr;
  };
  const upper = () => join(home ?? '/var/cache/tarmac-test', 'sandboxes', id, 'disk', 'upper');

  it('writes past the disk limit get ENOSPC and the host keeps its space', async () => {
    const hostFreeBefore = freeBytes(home ?? '/var/cache/tarmac-test');
    const out = await run('dd if=/dev/zero of=/fill bs=1M count=1024 2>&1');
    expect(out).toMatch(/No space left on device/);
    const written = Number(/(\d+) bytes/.exec(out)?.[1] ?? NaN);
    expect(written).toBeLessThanOrEqual(256 * 1024 * 1024);
    expect(written).toBeGreaterThan(128 * 1024 * 1024);
    expect((await run('df -m / | tail -1')).split(/\s+/)[1]).toMatch(/^2\d\d$/); // ~256 MB fs
    // The host lost at most the limit (other tests share the disk: allow their writes too).
    expect(hostFreeBefore - freeBytes(home ?? '/var/cache/tarmac-test')).toBeLessThan(600 * 1024 * 1024);
    expect(await run('rm /fill')).toContain('rc=0');
  }, 120_000);

  it('root inside is an unprivileged uid outside: a setuid file is not setuid-root on the host', async () => {
    expect(await run('id -u; cat /proc/self/uid_map')).toMatch(
      new RegExp(`^0\\n\\s*0\\s+${DEFAULT_ID_RANGE.base}\\s+${DEFAULT_ID_RANGE.size}`),
    );
    expect(await run('cp /bin/sh /suid-sh && chmod 4755 /suid-sh && ls -l /suid-sh')).toMatch(
      /-rwsr-xr-x 1 root root/,
    );
    const st = lstatSync(join(upper(), 'suid-sh'));
    expect(st.mode & 0o4000).toBe(0o4000); // the bit is there...
    expect(st.uid).toBe(DEFAULT_ID_RANGE.base); // ...for a uid that is nobody on the host
    expect(st.uid).not.toBe(0);
  }, 60_000);

  it('cannot make user namespaces, mount, or use io_uring, keyctl, bpf, perf_event_open', async () => {
    expect(await run('unshare -Urm true 2>&1')).toMatch(/Operation not permitted[\s\S]*rc=1/);
    expect(await run('unshare -m true 2>&1')).toMatch(/rc=1/);
    expect(await run('mount -t tmpfs x /mnt 2>&1')).not.toContain('rc=0');
    const py = (nr: number, args: string) =>
      run(
        `python3 -c "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(${nr},${args}); ` +
          `print('ret',r,'errno',os.strerror(ctypes.get_errno()))"`,
      );
    // x86_64 numbers: io_uring_setup 425, keyctl 250, add_key 248, bpf 321, perf_event_open 298.
    const params = 'ctypes.create_string_buffer(120)';
    expect(await py(425, `8,${params}`)).toMatch(/ret -1 errno Operation not permitted/);
    expect(await py(250, '0,0,0,0,0')).toMatch(/ret -1 errno Operation not permitted/);
    expect(await py(248, "b'user',b'k',b'v',1,-3")).toMatch(/ret -1 errno Operation not permitted/);
    expect(await py(321, `0,${params},120`)).toMatch(/ret -1 errno Operation not permitted/);
    expect(await py(298, `${params},0,-1,-1,0`)).toMatch(/ret -1 errno Operation not permitted/);
    // Ordinary process creation still works (fork/clone without namespace flags).
    expect(await run('sh -c "echo child" & wait')).toContain('child');
  }, 60_000);

  it('sees its own network devices in /sys, read-only, and not the host’s', async () => {
    expect((await run('ls /sys/class/net')).split('\n').filter(Boolean).sort()).toEqual([
      'eth0',
      'lo',
      'rc=0',
    ]);
    expect(await run('touch /sys/x 2>&1')).toMatch(/Read-only file system[\s\S]*rc=1/);
  }, 60_000);

  it('has no CAP_NET_RAW: raw sockets fail; ports below 1024 and ping sockets still open', async () => {
    expect(DEFAULT_CAPS).not.toContain('CAP_NET_RAW');
    const capEff = /CapEff:\s*([0-9a-f]+)/.exec(await run('grep Cap /proc/self/status'))?.[1] ?? '';
    expect(capEff).not.toBe('');
    expect(BigInt(`0x${capEff}`) & (1n << BigInt(CAP_NET_RAW))).toBe(0n);
    expect(
      await run(
        `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" 2>&1`,
      ),
    ).toMatch(/PermissionError|Operation not permitted/);
    expect(
      await run(`python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" 2>&1`),
    ).toMatch(/PermissionError|Operation not permitted/);
    expect(
      await run(
        `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP); ` +
          `s=socket.socket(); s.bind(('0.0.0.0', 80)); print('bound')"`,
      ),
    ).toContain('bound');
  }, 60_000);

  it('caps open files per process (RLIMIT_NOFILE)', async () => {
    expect(await run('ulimit -n; ulimit -Hn')).toMatch(/^2048\n2048\n/);
    const out = await run(
      `python3 -c "
import os
fds=[]
try:
    while True: fds.append(os.open('/dev/null', os.O_RDONLY))
except OSError as e: print('stopped', len(fds), e.strerror)"`,
    );
    expect(out).toMatch(/stopped 20\d\d Too many open files/);
    expect(
      await run(
        'python3 -c "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))" 2>&1',
      ),
    ).toMatch(/ValueError|not allowed|rc=1/);
  }, 60_000);

  it('volumes and the injected runtime stay usable; volume files belong to the sandbox’s ids', async () => {
    const vol = `hardvol-${process.pid.toString(36)}`;
    await engine.createVolume(vol, 32);
    const vid = uniqueId('hardv');
    created.push(vid);
    try {
      await engine.createSandbox({
        id: vid,
        image: 'tarmac/base:latest',
        memoryMB: 256,
        volumes: [{ volume: vol, mountPath: '/data' }],
      });
      await engine.waitReady(vid, 15_000);
      const r = await engine.exec(vid, [
        'sh',
        '-c',
        'echo hi > /data/f && ls -ln /data/f && ls /.tarmac/bin',
      ]);
      expect(r.stdout).toMatch(/ 0 +0 .* \/data\/f/);
      expect(r.stdout).toContain('node');
      const path = (await engine.listVolumes()).find((v) => v.name === vol)?.path ?? '';
      expect(lstatSync(join(path, 'f')).uid).toBe(DEFAULT_ID_RANGE.base);
    } finally {
      await engine.deleteSandbox(vid).catch(() => undefined);
      await engine.deleteVolume(vol).catch(() => undefined);
    }
  }, 120_000);

  it('refuses a sandbox whose memory the host cannot give, and says why', async () => {
    // Its own home: the shared test home holds other test files' live sandboxes, which count.
    const smallHome = mkdtempSync(join(tmpdir(), 'tarmac-hardcap-'));
    const small = testEngine(smallHome, {
      hostMemoryMB: 1024,
      network: NETWORK,
      imageDir: join(home ?? '/var/cache/tarmac-test', 'images'),
    });
    engines.push([small, smallHome]);
    expect(small.memoryCapacityMB).toBe(1024);
    const a = uniqueId('hardcap');
    await small.createSandbox({ id: a, image: 'tarmac/base:latest', memoryMB: 768 });
    const b = uniqueId('hardcap');
    await expect(small.createSandbox({ id: b, image: 'tarmac/base:latest', memoryMB: 512 })).rejects.toThrow(
      InsufficientCapacityError,
    );
    await expect(small.createSandbox({ id: b, image: 'tarmac/base:latest', memoryMB: 512 })).rejects.toThrow(
      /not enough memory on this host: 512 MB asked, 256 MB of 1024 MB left/,
    );
    expect(existsSync(join(smallHome, 'sandboxes', b))).toBe(false);
    await expect(small.resize(a, 2048)).rejects.toThrow(InsufficientCapacityError);
  }, 120_000);

  it('delete releases the disk; keepUpper keeps the writes with their ownership', async () => {
    const k = uniqueId('hardk');
    await engine.createSandbox({ id: k, image: 'tarmac/base:latest', memoryMB: 256 });
    await engine.waitReady(k, 15_000);
    await engine.exec(k, ['sh', '-c', 'echo kept > /kept']);
    const info = await engine.inspect(k);
    await engine.deleteSandbox(k, { keepUpper: true });
    const root = join(home ?? '/var/cache/tarmac-test', 'sandboxes', k);
    try {
      expect(await engine.leftovers(k, info.ip)).toEqual([]);
      expect(readdirSync(root).sort()).toEqual(['logs', 'upper']);
      expect(lstatSync(join(root, 'upper', 'kept')).uid).toBe(DEFAULT_ID_RANGE.base);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});

function freeBytes(path: string): number {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
}
