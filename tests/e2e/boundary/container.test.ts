// Issue 19 items 3 (CAP_NET_RAW), 5 (disk), 9 (seccomp, user namespace) and 13 (open files,
// memory) on the real platform: every test performs the attack the probe made and asserts that
// it no longer gets through. Also the probe's HELD cases that tests/e2e/sandboxes/isolation.test.ts
// does not already cover (mounts, kernel modules, /proc/sys and /sys writes).
import { lstatSync, statfsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  exec,
  getSandbox,
  json,
  missingCapability,
  startSandboxPlatform,
  waitSandbox,
} from '../sandboxes/support.js';

const missing = missingCapability();
const DISK_MB = 256;
/** Capacity the platform is given: ~1.5 GB whatever the host has (TARMAC_MEMORY_OVERCOMMIT). */
const CAPACITY_MB = 1536;
const HOST_MB = Math.floor(totalmem() / 1024 / 1024);
const SANDBOX_ROOT_UID = 1_000_000_000; // packages/engine userns.ts DEFAULT_ID_RANGE

describe.skipIf(missing !== null)(`container boundary${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  // too-big: only made if the 400 regresses, and then it must not outlive the file.
  const names = ['box', 'mem-a', 'mem-b', 'too-big'];

  beforeAll(async () => {
    p = await startSandboxPlatform({
      env: {
        // A bridge of its own: other files' platforms rewrite the shared e2e bridge's firewall.
        TARMAC_BRIDGE: 'tarmacbnd0',
        TARMAC_SUBNET: '10.249.0.0/16', // its own /16 (bench/sandbox-api-router.ts has 10.219)
        TARMAC_SANDBOX_DISK_MB: String(DISK_MB),
        // Chosen so that this host's memory times the ratio is CAPACITY_MB, on any host.
        TARMAC_MEMORY_OVERCOMMIT: String(CAPACITY_MB / HOST_MB),
      },
    });
    await createSandbox(p, 'box', {}, { memory: 256 });
  }, 15 * 60_000);

  afterAll(async () => {
    await cleanUp(p, names);
  }, 120_000);

  const run = async (command: string) => {
    const r = await exec(p!, 'box', `${command}; echo "rc=$?"`);
    return `${r.stdout ?? ''}${r.stderr ?? ''}`;
  };
  /** A raw syscall through python's ctypes: "ret <r> errno <text>". */
  const syscall = (nr: number, args: string) =>
    run(
      `python3 -c "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(${nr},${args}); ` +
        `print('ret',r,'errno',os.strerror(ctypes.get_errno()))" 2>&1`,
    );
  const freeBytes = () => {
    const s = statfsSync(p!.home);
    return s.bavail * s.bsize;
  };

  it('item 5: dd past the disk limit gets ENOSPC and the host’s free space barely moves', async () => {
    const before = freeBytes();
    const out = await run('dd if=/dev/zero of=/fill bs=1M count=2048 2>&1');
    expect(out).toMatch(/No space left on device/);
    const written = Number(/(\d+) bytes/.exec(out)?.[1] ?? NaN);
    expect(written).toBeLessThanOrEqual(DISK_MB * 1024 * 1024);
    // Before the fix all 2 GiB landed on the host's disk. Other tests share it: allow some slack.
    expect(before - freeBytes()).toBeLessThan((DISK_MB + 200) * 1024 * 1024);
    expect(await run('df -m / | tail -1')).toMatch(new RegExp(`\\s(2[0-9]{2})\\s`));
    expect(await run('rm -f /fill')).toContain('rc=0');
    expect(await run('echo still-writable > /tmp/x && cat /tmp/x')).toContain('still-writable');
  });

  it('item 9: root’s setuid file is not setuid-root on the host', async () => {
    expect(await run('cp /bin/sh /tmp/suid && chmod 4755 /tmp/suid && stat -c "%u %a" /tmp/suid')).toMatch(
      /^0 4755/,
    );
    const id = engineIds(p!.home).find((x) => {
      try {
        return lstatSync(join(p!.home, 'sandboxes', x, 'disk', 'upper', 'tmp', 'suid')).isFile();
      } catch {
        return false;
      }
    });
    expect(id).toBeDefined();
    const st = lstatSync(join(p!.home, 'sandboxes', id!, 'disk', 'upper', 'tmp', 'suid'));
    expect(st.mode & 0o4000).toBe(0o4000);
    expect(st.uid).not.toBe(0); // setuid to an unprivileged uid, not to host root
    expect(st.uid).toBe(SANDBOX_ROOT_UID);
    expect(await run('cat /proc/self/uid_map')).toMatch(new RegExp(`^\\s*0\\s+${SANDBOX_ROOT_UID}\\s+65536`));
  });

  it('item 9: unshare -Urm, io_uring, keyctl, add_key, bpf and perf_event_open are refused', async () => {
    expect(await run('unshare -Urm true 2>&1')).toMatch(/Operation not permitted[\s\S]*rc=1/);
    expect(await run('unshare -n true 2>&1')).toMatch(/rc=1/);
    const buf = 'ctypes.create_string_buffer(128)';
    // x86_64: io_uring_setup 425, keyctl 250, add_key 248, request_key 249, bpf 321, perf_event_open 298
    expect(await syscall(425, `8,${buf}`)).toMatch(/ret -1 errno Operation not permitted/);
    expect(await syscall(250, '0,0,0,0,0')).toMatch(/ret -1 errno Operation not permitted/);
    expect(await syscall(248, "b'user',b'k',b'v',1,-3")).toMatch(/ret -1 errno Operation not permitted/);
    expect(await syscall(249, "b'user',b'k',0,0")).toMatch(/ret -1 errno Operation not permitted/);
    expect(await syscall(321, `0,${buf},128`)).toMatch(/ret -1 errno Operation not permitted/);
    expect(await syscall(298, `${buf},0,-1,-1,0`)).toMatch(/ret -1 errno Operation not permitted/);
  });

  it('item 3: CAP_NET_RAW is gone: raw and packet sockets fail', async () => {
    const caps = /CapEff:\s*([0-9a-f]+)/.exec(await run('grep CapEff /proc/self/status'))?.[1];
    expect(caps).toBeDefined();
    expect(BigInt(`0x${caps!}`) & (1n << 13n)).toBe(0n); // CAP_NET_RAW = 13
    expect(
      await run(
        `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" 2>&1`,
      ),
    ).toMatch(/PermissionError[\s\S]*rc=1/);
    expect(
      await run(`python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" 2>&1`),
    ).toMatch(/PermissionError[\s\S]*rc=1/);
  });

  it('item 13: ulimit -n shows the cap and opening more files fails', async () => {
    expect(await run('ulimit -n; ulimit -Hn')).toMatch(/^4096\n4096\n/);
    const out = await run(
      `python3 -c "
import os
fds = []
try:
    while len(fds) < 20000: fds.append(os.open('/dev/null', os.O_RDONLY))
except OSError as e: print('stopped', len(fds), e.strerror)"`,
    );
    expect(out).toMatch(/stopped 40\d\d Too many open files/);
  });

  it('item 13: memory no host could give is a 400 naming spec.runtime.memory', async () => {
    for (const memory of [65_536, CAPACITY_MB + 512]) {
      const res = await p!.api('/v0/sandboxes', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'too-big' }, spec: { runtime: { memory } } }),
      });
      expect(res.status).toBe(400);
      const body = await json<{ message: string; details?: { field: string }[] }>(res);
      expect(body.message).toMatch(/^spec\.runtime\.memory: must be at most \d+/);
      expect(body.details?.[0]?.field).toBe('spec.runtime.memory');
    }
  });

  it('item 13: a sandbox whose memory is not free now goes FAILED and the event says why', async () => {
    await createSandbox(p!, 'mem-a', {}, { memory: 1024 }); // 256 (box) + 1024 of 1536
    const res = await p!.api('/v0/sandboxes', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'mem-b' }, spec: { runtime: { memory: 1024 } } }),
    });
    expect(res.status).toBe(200);
    const s = await waitSandbox(p!, 'mem-b', (x) => x.status === 'FAILED', 'mem-b FAILED');
    expect(s.events.map((e) => e.message).join('\n')).toMatch(
      /not enough memory on this host: 1024 MB asked, \d+ MB of \d+ MB left for sandboxes/,
    );
    expect((await getSandbox(p!, 'mem-a')).status).toBe('DEPLOYED');
  });

  it('held: mounts, kernel modules, /proc/sys and /sys writes are refused', async () => {
    expect(await run('mkdir -p /mnt/t && mount -t tmpfs none /mnt/t 2>&1')).not.toMatch(/rc=0/);
    expect(await run('mount --bind /tmp /mnt/t 2>&1')).not.toMatch(/rc=0/);
    expect(await run('mount -t proc proc /mnt/t 2>&1')).not.toMatch(/rc=0/);
    // finit_module (313) and init_module (175): refused before any module is looked at.
    expect(
      await run(
        `python3 -c "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); fd=os.open('/bin/true',os.O_RDONLY); ` +
          `r=l.syscall(313,fd,b'',0); print('ret',r,os.strerror(ctypes.get_errno()))" 2>&1`,
      ),
    ).toMatch(/ret -1 (Operation not permitted|Function not implemented)/); // ENOSYS: a kernel without modules
    expect(await syscall(175, "b'x',1,b''")).toMatch(
      /ret -1 errno (Operation not permitted|Function not implemented)/,
    );
    expect(await run('(echo 1 > /proc/sys/vm/drop_caches) 2>&1')).toMatch(
      /Read-only file system[\s\S]*rc=[12]/,
    );
    expect(await run('(echo 1 > /proc/sysrq-trigger) 2>&1')).not.toMatch(/rc=0/);
    expect(await run('touch /sys/tarmac-probe 2>&1')).toMatch(/Read-only file system[\s\S]*rc=1/);
    expect(await run('(echo 1 > /sys/kernel/profiling) 2>&1')).not.toMatch(/rc=0/);
    expect(await run('ls /sys/fs/cgroup/memory 2>&1 | head -3')).not.toMatch(/tarmac/); // not the host's tree
    expect(await run('ls /sys/class/net')).toMatch(/^eth0\nlo\nrc=0/); // its own netns, not the host's
  });
});
