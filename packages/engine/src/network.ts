// Sandbox networking: one host bridge, a veth pair and a named netns per sandbox.
//  - the host owns the bridge's gateway address, so the platform reaches every sandbox IP;
//  - bridge ports are "isolated": isolated ports cannot talk to each other, only to the bridge;
//  - each port is pinned to its sandbox's MAC and IPv4 address at the bridge (nftables, see
//    port-filter.ts: no ARP/IP/MAC spoofing, no IPv6 at all), and gets only frames for its own
//    MAC, so no sandbox sees frames meant for another (issue 19 item 3);
//  - iptables drops everything the sandboxes send to the host (INPUT) except replies and the
//    ports the platform serves them, and forwards nothing from or to the bridge: no way out and
//    no hairpin to another sandbox through the host's routing;
//  - IPv6 is off on the bridge (no link-local gateway to reach host services through) and an ip6
//    table drops what would still arrive (issue 19 item 4);
//  - the sandbox gets only an on-link route: no default route, so no egress (a later issue).
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CommandRunner } from './runner.js';
import { BridgeUsers } from './bridge-users.js';
import { IpLeases } from './ip-leases.js';
import {
  assertIfname,
  bridgeMac,
  filterSetupScript,
  filterTable,
  hostVethMac,
  pinScript,
  pinsOfPorts,
  sandboxMac,
  unpinScript,
  type PortPin,
} from './port-filter.js';
import { parseSubnet, type Subnet } from './subnet.js';

export interface NetworkConfig {
  /** Host bridge name (<= 15 chars). */
  bridge: string;
  /** IPv4 CIDR for the bridge; the first host address is the gateway (the host). */
  subnet: string;
  /** Host TCP ports sandboxes may connect to on the gateway (e.g. the egress proxy). */
  allowedHostPorts?: number[];
}

export interface Attachment {
  ip: string;
  netns: string;
  netnsPath: string;
  hostVeth: string;
}

export class BridgeNetwork {
  readonly subnet: Subnet;
  private readonly leases: IpLeases;
  private readonly users: BridgeUsers;
  private ready: Promise<void> | undefined;
  /** Whether the host has an IPv6 stack (set by setup; ipv6.disable=1 hosts have none). */
  private ipv6 = true;

  constructor(
    readonly config: NetworkConfig,
    private readonly runner: CommandRunner,
    leaseDir: string,
  ) {
    if (config.bridge.length > 15) throw new Error(`bridge name too long: ${config.bridge}`);
    assertIfname(config.bridge); // it goes verbatim into ip, iptables and nft scripts
    this.subnet = parseSubnet(config.subnet);
    this.leases = new IpLeases(leaseDir, this.subnet);
    this.users = new BridgeUsers(dirname(leaseDir));
  }

  /**
   * On shutdown: the last user of a bridge an engine created removes it with its firewall (chain,
   * INPUT/FORWARD rules, nft tables) when no sandbox port is left on it (bridge-users.ts).
   * Returns whether it removed them.
   */
  async release(): Promise<boolean> {
    if (!this.ready) return false;
    this.ready = undefined;
    const { bridge } = this.config;
    if (!this.users.unregister() || !this.users.created()) return false;
    const ports = await this.runner.run('ip', ['-j', 'link', 'show', 'master', bridge], { allowFail: true });
    if (ports.code === 0 && (JSON.parse(ports.stdout || '[]') as unknown[]).length > 0) return false;
    const chain = firewallChain(bridge);
    for (const rule of firewallRules(bridge)) {
      // -D removes one copy; an earlier crash may have left more.
      for (let i = 0; i < 8; i++) {
        const del = await this.runner.run('iptables', ['-w', '-D', ...rule], { allowFail: true });
        if (del.code !== 0) break;
      }
    }
    await this.runner.run('iptables', ['-w', '-F', chain], { allowFail: true });
    await this.runner.run('iptables', ['-w', '-X', chain], { allowFail: true });
    const table = filterTable(bridge);
    for (const family of ['bridge', 'ip6'])
      await this.runner.run('nft', ['delete', 'table', family, table], { allowFail: true });
    await this.runner.run('ip', ['link', 'del', bridge], { allowFail: true });
    this.users.forgetCreated();
    return true;
  }

  /** Creates the bridge and firewall rules once per engine instance; idempotent across restarts. */
  ensure(): Promise<void> {
    this.ready ??= this.setup().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  netnsName(id: string): string {
    return `tarmac-${id}`;
  }

  hostVeth(id: string): string {
    // Interface names are capped at 15 chars; a hash keeps them unique for any id.
    return `tv${createHash('sha256').update(id).digest('hex').slice(0, 12)}`;
  }

  /**
   * Leases an address and wires a netns to the bridge, pinned: the pin (`nft -f`) runs alongside
   * the host `ip -batch`, then the netns `ip -batch`; all is in place before the sandbox's first
   * process runs. One spawn more than without the pin, off the critical path.
   */
  async attach(id: string): Promise<Attachment> {
    await this.ensure();
    const { bridge } = this.config;
    const ip = this.leases.acquire(id);
    const netns = this.netnsName(id);
    const veth = this.hostVeth(id);
    const pin: PortPin = { veth, mac: sandboxMac(ip), ip };
    // No IPv6 addresses on either end (no link-local, no DAD/RS/MLD chatter): nothing uses it.
    const noV6 = (dev: string) => (this.ipv6 ? [`link set ${dev} addrgenmode none`] : []);
    try {
      await settleAll([
        this.runner.run('nft', ['-f', '-'], { input: pinScript(bridge, pin) }),
        this.runner
          .run('ip', ['-batch', '-'], {
            input: [
              `netns add ${netns}`,
              `link add ${veth} address ${hostVethMac(ip)} type veth peer name eth0 address ${pin.mac} netns ${netns}`,
              ...noV6(veth),
              `link set ${veth} master ${bridge}`,
              // Learning is safe with the pin: the bridge learns after the prerouting hook, so
              // only the port's own MAC is ever learnt on it. Frames the bridge floods (a MAC not
              // learnt yet) reach only the port whose MAC they are for (port-filter.ts).
              `link set ${veth} type bridge_slave isolated on learning on`,
              `link set ${veth} up`,
            ].join('\n'),
          })
          .then(() =>
            this.runner.run('ip', ['-n', netns, '-batch', '-'], {
              input: [
                `link set lo up`,
                ...noV6('eth0'),
                `addr add ${ip}/${this.subnet.prefix} dev eth0`,
                `link set eth0 up`,
              ].join('\n'),
            }),
          ),
      ]);
    } catch (err) {
      await this.detach(id, ip);
      throw err;
    }
    return { ip, netns, netnsPath: `/run/netns/${netns}`, hostVeth: veth };
  }

  /** Removes veth (synchronously, unlike netns teardown), netns and pin, and frees the address. */
  async detach(id: string, ip: string | null): Promise<void> {
    const veth = this.hostVeth(id);
    // A setup in progress (a platform start) may have listed this port before its link goes and
    // re-pin it after our unpin, leaving a pin for a port that is gone (the orphan reaper deletes
    // at start). Its outcome does not matter here: only that its pins are in before we unpin.
    await this.ready?.catch(() => undefined);
    await settleAll([
      this.runner.run('ip', ['-force', '-batch', '-'], {
        input: `link del ${veth}\nnetns del ${this.netnsName(id)}\n`,
        allowFail: true,
      }),
      // No address, nothing was pinned. Idempotent; fails only when the table never existed.
      ip
        ? this.runner.run('nft', ['-f', '-'], {
            input: unpinScript(this.config.bridge, { veth, mac: sandboxMac(ip), ip }),
            allowFail: true,
          })
        : Promise.resolve(),
    ]);
    if (ip) this.leases.release(ip);
  }

  /** Leftovers for a deleted sandbox, for leak checks. */
  async leftovers(id: string, ip: string): Promise<string[]> {
    const left: string[] = [];
    if (existsSync(`/run/netns/${this.netnsName(id)}`)) left.push(`netns ${this.netnsName(id)}`);
    const link = await this.runner.run('ip', ['link', 'show', this.hostVeth(id)], { allowFail: true });
    if (link.code === 0) left.push(`veth ${this.hostVeth(id)}`);
    if (this.leases.leased().includes(ip)) left.push(`lease ${ip}`);
    const table = filterTable(this.config.bridge);
    const ports = await this.runner.run('nft', ['list', 'set', 'bridge', table, 'ports'], {
      allowFail: true,
    });
    if (ports.stdout.includes(`"${this.hostVeth(id)}"`)) left.push(`pin ${this.hostVeth(id)}`);
    return left;
  }

  private async setup(): Promise<void> {
    const { bridge } = this.config;
    this.users.register();
    this.ipv6 = existsSync('/proc/sys/net/ipv6');
    const show = await this.runner.run('ip', ['-j', 'link', 'show', bridge], { allowFail: true });
    // A bridge takes the lowest MAC of its ports unless given one, and port MACs are now low
    // (02:76:...): the gateway's MAC would move whenever the lowest port goes, leaving every
    // sandbox's ARP entry for it stale. A bridge made before this is fixed at the MAC it has now
    // (nothing changes for its sandboxes); a new one gets a derived MAC at creation.
    // A bridge with no ports reads 00:00:00:00:00:00, which the kernel would accept and keep: that
    // one gets the derived MAC (no ports, no sandbox to notice).
    const mac = bridgeMac(bridge, (s) => createHash('sha256').update(s).digest('hex'));
    let keepMac = '';
    if (show.code === 0) {
      const current = (JSON.parse(show.stdout) as { address?: string }[])[0]?.address ?? '';
      keepMac = `link set ${bridge} address ${usableMac(current) ? current : mac}\n`;
    } else {
      // Concurrent engines may race here: -force keeps going past "File exists".
      const add = await this.runner.run('ip', ['-force', '-batch', '-'], {
        input: `link add name ${bridge} address ${mac} type bridge\n`,
        allowFail: true,
      });
      if (add.code === 0) this.users.markCreated();
    }
    // The gateway needs no IPv6: sandboxes have none, the platform and the egress proxy speak
    // IPv4. Disabled, the bridge has no link-local address to reach host services on, and the
    // kernel drops any IPv6 packet arriving on it (issue 19 item 4). Before `up`, so a new bridge
    // never gets a link-local address.
    const disable = `/proc/sys/net/ipv6/conf/${bridge}/disable_ipv6`;
    if (this.ipv6 && existsSync(disable)) writeFileSync(disable, '1');
    await this.runner.run('ip', ['-force', '-batch', '-'], {
      input: `${keepMac}addr replace ${this.subnet.gateway}/${this.subnet.prefix} dev ${bridge}\nlink set ${bridge} up\n`,
    });
    await this.firewall();
    // The port filter: rules replaced atomically, pins kept. Ports this code made (their MAC says
    // so) are pinned again, in case the kernel's tables were flushed while the platform was down
    // (an operator's `nft flush ruleset`). Ports made before the filter existed (random MACs)
    // are not in its `ports` set: they pass unfiltered until their sandbox is recreated.
    const ports = await this.runner.run('ip', ['-j', 'link', 'show', 'master', bridge]);
    await this.runner.run('nft', ['-f', '-'], {
      input: filterSetupScript(bridge, { ipv6: this.ipv6, pins: pinsOfPorts(ports.stdout) }),
    });
  }

  private async firewall(): Promise<void> {
    const { bridge } = this.config;
    const chain = firewallChain(bridge);
    const allow = (this.config.allowedHostPorts ?? []).map(
      (p) => `-A ${chain} -p tcp -d ${this.subnet.gateway} --dport ${p} -j ACCEPT`,
    );
    // iptables-restore --noflush replaces our chain atomically and leaves other rules alone.
    await this.runner.run('iptables-restore', ['-w', '--noflush'], {
      input: [
        '*filter',
        `:${chain} - [0:0]`,
        `-A ${chain} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
        ...allow,
        `-A ${chain} -j DROP`,
        'COMMIT',
        '',
      ].join('\n'),
    });
    for (const rule of firewallRules(bridge)) await this.ensureRule(rule);
  }

  private async ensureRule(rule: string[]): Promise<void> {
    const check = await this.runner.run('iptables', ['-w', '-C', ...rule], { allowFail: true });
    if (check.code !== 0) await this.runner.run('iptables', ['-w', '-I', ...rule]);
  }
}

function firewallChain(bridge: string): string {
  return `TARMAC-IN-${bridge}`.slice(0, 28);
}

/** The rules the firewall puts in the host's INPUT and FORWARD chains for one bridge. */
function firewallRules(bridge: string): string[][] {
  return [
    ['INPUT', '-i', bridge, '-j', firewallChain(bridge)],
    ['FORWARD', '-i', bridge, '-j', 'DROP'],
    ['FORWARD', '-o', bridge, '-j', 'DROP'],
  ];
}

/** Waits for every task (so a cleanup never races one still running), then throws the first error. */
async function settleAll(tasks: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(tasks);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}

/** A unicast, non-zero Ethernet address (what a gateway's MAC must be). */
function usableMac(mac: string): boolean {
  const m = /^([0-9a-f]{2})(:[0-9a-f]{2}){5}$/i.exec(mac);
  return m !== null && (parseInt(m[1]!, 16) & 1) === 0 && !/^(00:){5}00$/.test(mac);
}
