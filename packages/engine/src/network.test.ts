// BridgeNetwork on the real kernel (root, ip, nft): the anti-spoofing pins of issue 19 item 3 are
// made at attach, kept by a new engine on the same bridge (a platform restart), made again when
// the kernel lost them (an operator's `nft flush ruleset`), and gone after detach; IPv6 is off on
// the bridge (item 4). No runc: only the netns and veth are made. Own bridge, subnet and tables,
// removed at the end.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BridgeNetwork } from './network.js';
import { sandboxMac } from './port-filter.js';
import { ProcessRunner, type CommandRunner } from './runner.js';

const BRIDGE = 'tarmacnwunit0';
/** A bridge made by hand, as an older engine left it. */
const OLD_BRIDGE = 'tarmacnwunit1';
const TABLE = `tarmac_${BRIDGE}`;

function unavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  for (const bin of ['ip', 'nft', 'iptables']) {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    } catch {
      return `${bin} not installed`;
    }
  }
  return null;
}
const skip = unavailable();

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
const tryRun = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    // not there
  }
};
const pinnedPorts = () => sh('nft', ['list', 'set', 'bridge', TABLE, 'ports']);
const pinnedIps = () => sh('nft', ['list', 'set', 'bridge', TABLE, 'ipv4']);

describe.skipIf(skip !== null)(`bridge port pinning${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // The network keeps its bridge's users beside the lease dir (bridge-users.ts: `dirname`), so the
  // lease dir is one level down in a private temp dir, not in the shared tmpdir itself.
  const home = mkdtempSync(join(tmpdir(), 'tarmac-nw-'));
  const leaseDir = join(home, 'leases');
  const make = () =>
    new BridgeNetwork({ bridge: BRIDGE, subnet: '10.242.0.0/24' }, new ProcessRunner(), leaseDir);
  const ids = ['nwunit-a', 'nwunit-b'];

  afterAll(async () => {
    const net = make();
    for (const id of ids) await net.detach(id, null).catch(() => undefined);
    tryRun('ip', ['link', 'del', 'tvnwunitold']);
    for (const br of [BRIDGE, OLD_BRIDGE]) {
      tryRun('ip', ['link', 'del', br]);
      for (const family of ['bridge', 'ip6']) tryRun('nft', ['delete', 'table', family, `tarmac_${br}`]);
      const chain = `TARMAC-IN-${br}`.slice(0, 28);
      tryRun('iptables', ['-w', '-D', 'INPUT', '-i', br, '-j', chain]);
      tryRun('iptables', ['-w', '-D', 'FORWARD', '-i', br, '-j', 'DROP']);
      tryRun('iptables', ['-w', '-D', 'FORWARD', '-o', br, '-j', 'DROP']);
      tryRun('iptables', ['-w', '-F', chain]);
      tryRun('iptables', ['-w', '-X', chain]);
    }
    rmSync(home, { recursive: true, force: true });
  });

  it('pins at attach, keeps pins across a restart, re-pins after a flush, unpins at detach', async () => {
    const first = make();
    await first.ensure();
    const gatewayMac = readFileSync(`/sys/class/net/${BRIDGE}/address`, 'utf8');
    const a = await first.attach(ids[0]!);
    const b = await first.attach(ids[1]!);
    // The sandbox has the derived MAC, no IPv6 address; the port is pinned.
    const eth0 = JSON.parse(sh('ip', ['-j', '-n', a.netns, 'addr', 'show', 'eth0'])) as {
      address: string;
      addr_info: { family: string }[];
    }[];
    expect(eth0[0]!.address).toBe(sandboxMac(a.ip));
    expect(eth0[0]!.addr_info.map((i) => i.family)).toEqual(['inet']);
    expect(pinnedPorts()).toContain(`"${a.hostVeth}"`);
    expect(pinnedIps()).toContain(`"${b.hostVeth}" . ${sandboxMac(b.ip)} . ${b.ip}`);
    // The gateway's MAC is fixed (3 = NET_ADDR_SET): the ports' low MACs do not move it.
    expect(readFileSync(`/sys/class/net/${BRIDGE}/address`, 'utf8')).toBe(gatewayMac);
    expect(readFileSync(`/sys/class/net/${BRIDGE}/addr_assign_type`, 'utf8').trim()).toBe('3');
    // Item 4: the gateway has no IPv6 (no link-local address), the ip6 table drops the bridge.
    expect(sh('ip', ['-6', 'addr', 'show', 'dev', BRIDGE])).toBe('');
    expect(sh('nft', ['list', 'chain', 'ip6', TABLE, 'input'])).toContain(`iifname "${BRIDGE}" drop`);

    // A new engine on the same bridge (a platform restart): rules replaced, pins untouched.
    await make().ensure();
    expect(pinnedIps()).toContain(`"${a.hostVeth}" . ${sandboxMac(a.ip)} . ${a.ip}`);
    expect(pinnedIps()).toContain(`"${b.hostVeth}" . ${sandboxMac(b.ip)} . ${b.ip}`);
    expect(sh('nft', ['list', 'chain', 'bridge', TABLE, 'from_sandboxes']).match(/\bdrop\b/g)).toHaveLength(
      4,
    );

    // The kernel lost everything while the platform was down: the next engine pins the live ports again.
    sh('nft', ['delete', 'table', 'bridge', TABLE]);
    await make().ensure();
    expect(pinnedIps()).toContain(`"${a.hostVeth}" . ${sandboxMac(a.ip)} . ${a.ip}`);
    expect(pinnedIps()).toContain(`"${b.hostVeth}" . ${sandboxMac(b.ip)} . ${b.ip}`);

    expect(readFileSync(`/sys/class/net/${BRIDGE}/address`, 'utf8')).toBe(gatewayMac);

    // Detach removes the pin; a second detach (a retried delete) is fine.
    const net = make();
    await net.detach(ids[0]!, a.ip);
    await net.detach(ids[0]!, a.ip);
    expect(pinnedPorts()).not.toContain(`"${a.hostVeth}"`);
    expect(await net.leftovers(ids[0]!, a.ip)).toEqual([]);
    expect(pinnedPorts()).toContain(`"${b.hostVeth}"`);
    await net.detach(ids[1]!, b.ip);
    expect(await net.leftovers(ids[1]!, b.ip)).toEqual([]);
  });

  it('a detach during a start-up setup leaves no pin behind (the setup listed the port before it went)', async () => {
    const a = await make().attach(ids[0]!);
    // A restarted engine's setup lists the bridge's ports, then (held here until the detach has
    // run) writes the filter with their pins; meanwhile the orphan reaper deletes the sandbox.
    let listed!: () => void;
    const portsListed = new Promise<void>((r) => (listed = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const real = new ProcessRunner();
    const runner: CommandRunner = {
      run: async (cmd, args, opts) => {
        if (cmd === 'nft' && opts?.input?.includes('flush chain')) await held;
        const out = await real.run(cmd, args, opts);
        if (cmd === 'ip' && args.includes('master')) listed();
        return out;
      },
    } as CommandRunner;
    const restarted = new BridgeNetwork({ bridge: BRIDGE, subnet: '10.242.0.0/24' }, runner, leaseDir);
    const setup = restarted.ensure();
    await portsListed;
    const detached = restarted.detach(ids[0]!, a.ip);
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([setup, detached]);
    expect(pinnedPorts()).not.toContain(`"${a.hostVeth}"`);
    expect(await restarted.leftovers(ids[0]!, a.ip)).toEqual([]);
  });

  it("fixes an older bridge's MAC where it is, and gives a port-less one (00:..:00) a real one", async () => {
    const mac = (br: string) => readFileSync(`/sys/class/net/${br}/address`, 'utf8').trim();
    const oldNet = () =>
      new BridgeNetwork({ bridge: OLD_BRIDGE, subnet: '10.242.1.0/24' }, new ProcessRunner(), leaseDir);
    // Its last port gone, a bridge nobody gave a MAC reads all zeroes.
    sh('ip', ['link', 'add', 'name', OLD_BRIDGE, 'type', 'bridge']);
    sh('ip', ['link', 'add', 'tvnwunitold', 'type', 'veth', 'peer', 'name', 'tvnwunitoldp']);
    sh('ip', ['link', 'set', 'tvnwunitold', 'master', OLD_BRIDGE]);
    sh('ip', ['link', 'del', 'tvnwunitold']);
    expect(mac(OLD_BRIDGE)).toBe('00:00:00:00:00:00');
    await oldNet().ensure();
    expect(mac(OLD_BRIDGE)).toMatch(/^02:77:/);
    // One with a port keeps the MAC it has (its sandboxes' ARP entries stay right), now fixed.
    sh('ip', ['link', 'set', OLD_BRIDGE, 'address', '02:11:22:33:44:55']);
    await oldNet().ensure();
    expect(mac(OLD_BRIDGE)).toBe('02:11:22:33:44:55');
    expect(readFileSync(`/sys/class/net/${OLD_BRIDGE}/addr_assign_type`, 'utf8').trim()).toBe('3');
  });
});
