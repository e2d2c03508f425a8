// Issue 19 items 3 and 4, the network half: a sandbox with full privileges in its own network
// namespace (the test enters it as root, so raw sockets and sysctls work, more than a sandbox has)
// forges ARP, source MACs, IPv4 sources and IPv6 NA/RA at the bridge, and tries the host's
// services over IPv6. All of it must be dropped at the bridge port: the gateway's neighbour table
// keeps the victim's MAC, nothing forged reaches the host (a capture on the bridge device), the
// platform's requests still reach the victim, the attacker's raw socket sees none of them, and no
// host service answers over IPv6. Each test fails on the code before the fix (checked).
// The platform gets its own bridge and subnet (below); the test removes them at the end.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  exec,
  missingCapability,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';

const BRIDGE = 'tarmacnwspoof0';
// A /16 no other test file uses (files leave their bridges up; two bridges on one subnet break routing).
const SUBNET = '10.250.0.0/16';
const GATEWAY = '10.250.0.1';
/** The link-local address the attacker gives itself (and binds to) for the IPv6 probe. */
const SOURCE = 'fe80::7a7a:1';
const FORGE = join(import.meta.dirname, 'forge-frames.py');
const CAPTURE = join(import.meta.dirname, 'capture-frames.py');

function missing(): string | null {
  const m = missingCapability();
  if (m) return m;
  try {
    execFileSync('python3', ['-c', 'import socket; socket.AF_PACKET'], { stdio: 'ignore' });
  } catch {
    return 'python3 with AF_PACKET not available on the host';
  }
  return null;
}
const skip = missing();

interface Box {
  name: string;
  ip: string;
  mac: string;
  netns: string;
}

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
/** MAC of `dev`, in `netns` or on the host. */
const linkMac = (dev: string, netns?: string) =>
  (
    JSON.parse(sh('ip', ['-j', ...(netns ? ['-n', netns] : []), 'link', 'show', dev])) as {
      address: string;
    }[]
  )[0]!.address;
/** Runs a host command, ignoring failure (clean-up of what may not exist). */
const tryRun = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    // already gone
  }
};

/** The neighbour entry the host holds for `ip` on the bridge (its MAC), or null. */
function hostNeighbour(ip: string): string | null {
  const rows = JSON.parse(sh('ip', ['-j', 'neigh', 'show', ip, 'dev', BRIDGE])) as { lladdr?: string }[];
  return rows[0]?.lladdr ?? null;
}

/** fe80::/64 address a link with `mac` gets from EUI-64 (what the bridge had before item 4). */
function linkLocalOf(mac: string): string {
  const b = mac.split(':').map((h) => parseInt(h, 16));
  const eui = [b[0]! ^ 2, b[1]!, b[2]!, 0xff, 0xfe, b[3]!, b[4]!, b[5]!];
  const groups = [0, 2, 4, 6].map((i) => ((eui[i]! << 8) | eui[i + 1]!).toString(16));
  return `fe80::${groups.join(':')}`;
}

/** Runs the forger in the attacker's netns. */
function forge(box: Box, attack: string, args: Record<string, unknown>): void {
  const out = sh('ip', ['netns', 'exec', box.netns, 'python3', FORGE, 'eth0', attack, JSON.stringify(args)]);
  expect(out).toContain('sent');
}

/**
 * Counts frames carrying `marker` on an interface while `during` runs: on the bridge device (what
 * the bridge passed up to the host) or, with `netns`, on a sandbox's eth0 (what it was sent).
 */
async function capture(
  where: { netns?: string; ifname: string },
  marker: string,
  during: () => Promise<void>,
): Promise<number> {
  const cmd = [CAPTURE, where.ifname, marker, '2.5'];
  const child = where.netns
    ? spawn('ip', ['netns', 'exec', where.netns, 'python3', ...cmd], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn('python3', cmd, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    }),
  );
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await ready;
  await during();
  await done;
  return Number(out.split('\n').filter(Boolean).at(-1));
}

const captureOnBridge = (marker: string, during: () => Promise<void>) =>
  capture({ ifname: BRIDGE }, marker, during);

describe.skipIf(skip !== null)(`network anti-spoofing${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let hostService: Server | undefined;
  let hostPort = 0;
  let victim: Box;
  let attacker: Box;
  let victimHostname = '';
  let bridgeMac = '';
  const names = ['spoof-victim', 'spoof-attacker'];

  const boxOf = async (name: string): Promise<Box> => {
    const ip = (await exec(p!, name, "hostname -I | awk '{print $1}'")).stdout!.trim();
    const id = engineIds(p!.home).find(
      (i) =>
        (JSON.parse(readFileSync(join(p!.home, 'sandboxes', i, 'sandbox.json'), 'utf8')) as { ip: string })
          .ip === ip,
    );
    expect(id, `engine id of ${name} (${ip})`).toBeDefined();
    const netns = `tarmac-${id}`;
    return { name, ip, netns, mac: linkMac('eth0', netns) };
  };

  beforeAll(async () => {
    p = await startSandboxPlatform({ env: { TARMAC_BRIDGE: BRIDGE, TARMAC_SUBNET: SUBNET } });
    // A host service on every address, IPv4 and IPv6 ("::" is dual-stack).
    hostService = createServer((s) => s.end('host-secret\n'));
    await new Promise<void>((r) => hostService!.listen(0, '::', r));
    hostPort = (hostService.address() as { port: number }).port;
    await createSandbox(p, 'spoof-victim', {}, { memory: 256 });
    await createSandbox(p, 'spoof-attacker', {}, { memory: 256 });
    victim = await boxOf('spoof-victim');
    attacker = await boxOf('spoof-attacker');
    victimHostname = (await exec(p, 'spoof-victim', 'hostname')).stdout!.trim();
    bridgeMac = linkMac(BRIDGE);
  }, 15 * 60_000);

  afterAll(async () => {
    hostService?.close();
    await cleanUp(p, names);
    // This file's own bridge and its filter tables (nothing else is touched).
    tryRun('ip', ['link', 'del', BRIDGE]);
    for (const family of ['bridge', 'ip6']) tryRun('nft', ['delete', 'table', family, `tarmac_${BRIDGE}`]);
    const chain = `TARMAC-IN-${BRIDGE}`.slice(0, 28);
    for (const rule of [
      ['INPUT', '-i', BRIDGE, '-j', chain],
      ['FORWARD', '-i', BRIDGE, '-j', 'DROP'],
      ['FORWARD', '-o', BRIDGE, '-j', 'DROP'],
    ]) {
      tryRun('iptables', ['-w', '-D', ...rule]);
    }
    tryRun('iptables', ['-w', '-F', chain]);
    tryRun('iptables', ['-w', '-X', chain]);
  }, 120_000);

  it('keeps the victim at its own MAC in the gateway neighbour table against forged ARP', async () => {
    expect(victim.mac).not.toBe(attacker.mac);
    // The platform just talked to the victim: the host has its entry. Forged replies then keep
    // coming for 1.5 s, past the kernel's 1 s lock time in which an entry cannot be overridden.
    expect((await exec(p!, 'spoof-victim', 'hostname')).stdout!.trim()).toBe(victimHostname);
    expect(hostNeighbour(victim.ip)).toBe(victim.mac);
    const marker = `arp-${randomUUID()}`;
    const common = { marker, myMac: attacker.mac, victimIp: victim.ip, gwMac: bridgeMac, gwIp: GATEWAY };
    const through = await captureOnBridge(marker, async () => {
      forge(attacker, 'arp-reply-victim-ip', { ...common, repeat: 15, interval: 0.1 });
      forge(attacker, 'arp-request-victim-ip', { ...common, repeat: 3, interval: 0.1 });
    });
    expect(through).toBe(0);
    expect(hostNeighbour(victim.ip)).toBe(victim.mac);
    // And the platform's exec request still reaches the victim, not the attacker.
    expect((await exec(p!, 'spoof-victim', 'hostname')).stdout!.trim()).toBe(victimHostname);
  });

  it("drops frames with another sandbox's MAC and IPv4 packets with another sandbox's address", async () => {
    // The control: the capture does see what a port may send (its own MAC and address).
    const own = `own-${randomUUID()}`;
    const seen = await captureOnBridge(own, async () => {
      forge(attacker, 'own-ipv4', {
        marker: own,
        myMac: attacker.mac,
        myIp: attacker.ip,
        gwMac: bridgeMac,
        gwIp: GATEWAY,
        repeat: 3,
        interval: 0.05,
      });
    });
    expect(seen).toBe(3);
    for (const attack of ['vlan-ipv4', 'spoofed-mac', 'spoofed-mac-ipv4', 'spoofed-ipv4']) {
      const marker = `${attack}-${randomUUID()}`;
      const through = await captureOnBridge(marker, async () => {
        forge(attacker, attack, {
          marker,
          myMac: attacker.mac,
          myIp: attacker.ip,
          victimMac: victim.mac,
          victimIp: victim.ip,
          gwMac: bridgeMac,
          gwIp: GATEWAY,
          repeat: 3,
          interval: 0.05,
        });
      });
      expect(through, attack).toBe(0);
    }
    expect(hostNeighbour(victim.ip)).toBe(victim.mac);
    expect((await exec(p!, 'spoof-victim', 'hostname')).stdout!.trim()).toBe(victimHostname);
  });

  it('cannot sniff what the host sends another sandbox, even when the bridge floods it', async () => {
    // Forget where the victim's MAC is, so the bridge floods the host's next frames to it to every
    // port (before the fix every frame was flooded: learning was off). The exec request carries
    // the marker; the attacker listens on its eth0 with a raw socket.
    const id = victim.netns.slice('tarmac-'.length);
    const veth = `tv${createHash('sha256').update(id).digest('hex').slice(0, 12)}`;
    tryRun('bridge', ['fdb', 'del', victim.mac, 'dev', veth, 'master']);
    const marker = `sniff-${randomUUID()}`;
    const sniffed = await capture({ netns: attacker.netns, ifname: 'eth0' }, marker, async () => {
      const r = await exec(p!, 'spoof-victim', `echo ${marker} >/dev/null; hostname`);
      expect(r.stdout!.trim()).toBe(victimHostname);
    });
    expect(sniffed).toBe(0);
  });

  it('drops forged IPv6 neighbour and router advertisements: nothing reaches the host', async () => {
    const prefix = 'fd7a:7a7a:7a7a:7a7a::';
    for (const attack of ['ipv6-na', 'ipv6-ra']) {
      const marker = `${attack}-${randomUUID()}`;
      const through = await captureOnBridge(marker, async () => {
        forge(attacker, attack, {
          marker,
          myMac: attacker.mac,
          myLinkLocal: linkLocalOf(attacker.mac),
          target: linkLocalOf(bridgeMac),
          prefix,
          repeat: 3,
          interval: 0.05,
        });
      });
      expect(through, attack).toBe(0);
    }
    // The RA's prefix was not autoconfigured on the host.
    expect(sh('ip', ['-6', 'addr', 'show', 'dev', BRIDGE])).not.toContain('fd7a');
    expect(sh('ip', ['-6', 'route', 'show', 'dev', BRIDGE])).not.toContain('fd7a');
  });

  it('reaches no host service over IPv6: not the bridge link-local, not any other host address', async () => {
    // The attacker turns IPv6 on in its netns (root there), gives itself a link-local address
    // and static neighbour entries (so no ND is needed), and connects to the host's service.
    const ns = ['netns', 'exec', attacker.netns];
    sh('ip', [...ns, 'sysctl', '-q', '-w', 'net.ipv6.conf.eth0.disable_ipv6=0']);
    sh('ip', ['-n', attacker.netns, '-6', 'addr', 'replace', `${SOURCE}/64`, 'dev', 'eth0', 'nodad']);
    // Before item 4 the bridge had a link-local address; let its DAD finish, or the old code
    // would pass this test by luck.
    await waitFor(
      'no tentative IPv6 address on the bridge',
      async () => (sh('ip', ['-6', 'addr', 'show', 'dev', BRIDGE, 'tentative']).trim() ? undefined : true),
      5000,
    );
    const hostAddrs = (
      JSON.parse(sh('ip', ['-j', '-6', 'addr', 'show', 'scope', 'global'])) as {
        addr_info: { local: string; family: string }[];
      }[]
    ).flatMap((l) => l.addr_info.filter((a) => a.family === 'inet6').map((a) => a.local));
    // The bridge's link-local addresses: the ones it has (before item 4) and the one it would
    // get from its MAC.
    const bridgeLinkLocal = (
      JSON.parse(sh('ip', ['-j', '-6', 'addr', 'show', 'dev', BRIDGE, 'scope', 'link'])) as {
        addr_info: { local: string }[];
      }[]
    ).flatMap((l) => l.addr_info.map((a) => a.local));
    const linkLocal = [...new Set([...bridgeLinkLocal, linkLocalOf(bridgeMac)])];
    const targets = [...linkLocal.map((a) => `${a}%eth0`), ...hostAddrs];
    for (const t of targets) {
      const addr = t.split('%')[0]!;
      sh('ip', [
        '-n',
        attacker.netns,
        '-6',
        'neigh',
        'replace',
        addr,
        'lladdr',
        bridgeMac,
        'dev',
        'eth0',
        'nud',
        'permanent',
      ]);
      if (!addr.startsWith('fe80'))
        sh('ip', ['-n', attacker.netns, '-6', 'route', 'replace', `${addr}/128`, 'dev', 'eth0']);
    }
    const probe = [
      'import socket, sys',
      'for t in sys.argv[3:]:',
      '    try:',
      '        c = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)',
      '        c.settimeout(2)',
      '        c.bind((sys.argv[2], 0, 0, socket.if_nametoindex("eth0")))',
      '        c.connect(socket.getaddrinfo(t, int(sys.argv[1]), socket.AF_INET6)[0][4])',
      '        print(t, "REACHED", flush=True)', // the handshake completed: the host answered
      '        print(t, c.recv(100).decode().strip())',
      '    except OSError as e:',
      '        print(t, "blocked", type(e).__name__, e)',
    ].join('\n');
    // Not execFileSync: the host service lives in this process and must keep accepting.
    const { stdout: out } = await promisify(execFile)(
      'ip',
      [...ns, 'python3', '-c', probe, String(hostPort), SOURCE, ...targets],
      { encoding: 'utf8' },
    );
    expect(out.trim().split('\n').length, out).toBeGreaterThanOrEqual(targets.length);
    expect(out, out).not.toContain('REACHED');
    expect(out).not.toContain('host-secret');
  });

  it('keeps sandboxes apart and the victim reachable by the platform', async () => {
    const r = await exec(
      p!,
      'spoof-attacker',
      `curl -s -m 2 --noproxy '*' http://${victim.ip}:8080/health; echo rc=$?`,
    );
    expect(r.stdout).toMatch(/rc=(7|28)/);
    expect((await exec(p!, 'spoof-victim', 'hostname')).stdout!.trim()).toBe(victimHostname);
    // The veth names the engine derives (sha256 of the id): both are pinned ports of the bridge.
    const ports = sh('nft', ['list', 'set', 'bridge', `tarmac_${BRIDGE}`, 'ports']);
    for (const box of [victim, attacker]) {
      const id = box.netns.slice('tarmac-'.length);
      expect(ports).toContain(`tv${createHash('sha256').update(id).digest('hex').slice(0, 12)}`);
    }
  });
});
