// Sandbox networking: one host bridge, a veth pair and a named netns per sandbox.
//  - the host owns the bridge's gateway address, so the platform reaches every sandbox IP;
//  - bridge ports are "isolated": isolated ports cannot talk to each other, only to the bridge;
//  - iptables drops everything the sandboxes send to the host (INPUT) except replies and the
//    ports the platform serves them, and forwards nothing from or to the bridge: no way out and
//    no hairpin to another sandbox through the host's routing;
//  - the sandbox gets only an on-link route: no default route, so no egress (a later issue).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { CommandRunner } from './runner.js';
import { IpLeases } from './ip-leases.js';
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
  private ready: Promise<void> | undefined;

  constructor(
    readonly config: NetworkConfig,
    private readonly runner: CommandRunner,
    leaseDir: string,
  ) {
    if (config.bridge.length > 15) throw new Error(`bridge name too long: ${config.bridge}`);
    this.subnet = parseSubnet(config.subnet);
    this.leases = new IpLeases(leaseDir, this.subnet);
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

  /** Leases an address and wires a netns to the bridge: two `ip -batch` runs, no per-step spawns. */
  async attach(id: string): Promise<Attachment> {
    await this.ensure();
    const ip = this.leases.acquire(id);
    const netns = this.netnsName(id);
    const veth = this.hostVeth(id);
    try {
      await this.runner.run('ip', ['-batch', '-'], {
        input: [
          `netns add ${netns}`,
          `link add ${veth} type veth peer name eth0 netns ${netns}`,
          `link set ${veth} master ${this.config.bridge}`,
          `link set ${veth} type bridge_slave isolated on learning off`,
          `link set ${veth} up`,
        ].join('\n'),
      });
      await this.runner.run('ip', ['-n', netns, '-batch', '-'], {
        input: [`link set lo up`, `addr add ${ip}/${this.subnet.prefix} dev eth0`, `link set eth0 up`].join(
          '\n',
        ),
      });
    } catch (err) {
      await this.detach(id, ip);
      throw err;
    }
    return { ip, netns, netnsPath: `/run/netns/${netns}`, hostVeth: veth };
  }

  /** Removes veth (synchronously, unlike netns teardown) and netns, and frees the address. */
  async detach(id: string, ip: string | null): Promise<void> {
    await this.runner.run('ip', ['-force', '-batch', '-'], {
      input: `link del ${this.hostVeth(id)}\nnetns del ${this.netnsName(id)}\n`,
      allowFail: true,
    });
    if (ip) this.leases.release(ip);
  }

  /** Leftovers for a deleted sandbox, for leak checks. */
  async leftovers(id: string, ip: string): Promise<string[]> {
    const left: string[] = [];
    if (existsSync(`/run/netns/${this.netnsName(id)}`)) left.push(`netns ${this.netnsName(id)}`);
    const link = await this.runner.run('ip', ['link', 'show', this.hostVeth(id)], { allowFail: true });
    if (link.code === 0) left.push(`veth ${this.hostVeth(id)}`);
    if (this.leases.leased().includes(ip)) left.push(`lease ${ip}`);
    return left;
  }

  private async setup(): Promise<void> {
    const { bridge } = this.config;
    const show = await this.runner.run('ip', ['link', 'show', bridge], { allowFail: true });
    if (show.code !== 0) {
      // Concurrent engines may race here: -force keeps going past "File exists".
      await this.runner.run('ip', ['-force', '-batch', '-'], {
        input: `link add name ${bridge} type bridge\n`,
        allowFail: true,
      });
    }
    await this.runner.run('ip', ['-force', '-batch', '-'], {
      input: `addr replace ${this.subnet.gateway}/${this.subnet.prefix} dev ${bridge}\nlink set ${bridge} up\n`,
    });
    await this.firewall();
  }

  private async firewall(): Promise<void> {
    const { bridge } = this.config;
    const chain = `TARMAC-IN-${bridge}`.slice(0, 28);
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
    await this.ensureRule(['INPUT', '-i', bridge, '-j', chain]);
    await this.ensureRule(['FORWARD', '-i', bridge, '-j', 'DROP']);
    await this.ensureRule(['FORWARD', '-o', bridge, '-j', 'DROP']);
  }

  private async ensureRule(rule: string[]): Promise<void> {
    const check = await this.runner.run('iptables', ['-w', '-C', ...rule], { allowFail: true });
    if (check.code !== 0) await this.runner.run('iptables', ['-w', '-I', ...rule]);
  }
}
