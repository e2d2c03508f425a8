// Anti-spoofing at the bridge (issue 19 items 3 and 4): the nftables rules that pin each sandbox
// port to the one MAC and IPv4 address the engine gave it, and keep IPv6 off the bridge.
//
// Why: a sandbox with raw sockets (root in its netns, CAP_NET_RAW) could forge ARP replies and
// take another tenant's address at the host, which then sent that tenant's exec requests to it.
// Isolated bridge ports already stop sandbox-to-sandbox frames; what reaches the host from a port
// must now carry that port's own identity:
//  - every frame: source MAC = the port's pinned MAC (no spoofed MACs, no bogus FDB entries);
//  - ARP: sender hardware and protocol address = the pinned pair (no cache poisoning);
//  - IPv4: source address = the pinned address; no ICMP redirects, no DHCP-server traffic;
//  - everything else is dropped: IPv6 (so no NA/RA/DHCPv6, no link-local route to the host),
//    VLAN tags, other ethertypes. The sandbox has no IPv6 address at all: nothing needs it.
// Towards the sandboxes, a port gets only frames for its own MAC or group addresses, so a
// flooded frame can never be sniffed by another sandbox.
//
// This file only generates text (pure, unit tested); network.ts runs it with `nft -f`. All rules
// live in tables named after the bridge (`tarmac_<bridge>`), so several platforms on one host
// never touch each other's, and nothing here flushes a table: setup flushes and refills only its
// own chains, atomically, and leaves the per-sandbox set elements (which survive a platform
// restart in the kernel) alone.

/** One sandbox port as the filter knows it. */
export interface PortPin {
  /** Host side of the sandbox's veth pair (the bridge port). */
  veth: string;
  /** The sandbox's eth0 MAC. */
  mac: string;
  /** The sandbox's IPv4 address. */
  ip: string;
}

/** Interface names the kernel and our nft/ip scripts accept verbatim (no quoting games). */
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;

export function assertIfname(name: string): void {
  if (!IFNAME.test(name)) throw new Error(`invalid interface name: ${JSON.stringify(name)}`);
}

/** The nft table of a bridge (bridge family for the port filter, ip6 for the host firewall). */
export function filterTable(bridge: string): string {
  assertIfname(bridge);
  return `tarmac_${bridge.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

function macFromIp(prefix: number, ip: string): string {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`invalid IPv4 address ${ip}`);
  }
  return [2, prefix, ...parts].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/**
 * The sandbox's eth0 MAC, derived from its address: locally administered unicast, unique on the
 * bridge because the address is leased, and the same again when an address is reused, so the
 * host's neighbour entry for it stays right.
 */
export function sandboxMac(ip: string): string {
  return macFromIp(0x74, ip);
}

/**
 * The host side's MAC. Derived too: a port whose MAC has this form was made by this code, which
 * is how setup re-pins ports it finds after a restart without trusting anything else.
 */
export function hostVethMac(ip: string): string {
  return macFromIp(0x76, ip);
}

/** The sandbox address encoded in a host veth MAC, or null when the port was not made by us. */
export function ipOfHostVethMac(mac: string): string | null {
  const m = /^02:76:([0-9a-f]{2}):([0-9a-f]{2}):([0-9a-f]{2}):([0-9a-f]{2})$/i.exec(mac);
  return m
    ? m
        .slice(1)
        .map((h) => parseInt(h, 16))
        .join('.')
    : null;
}

/**
 * The bridge's own MAC, fixed at creation: otherwise Linux gives a bridge the lowest MAC of its
 * ports, and the gateway's MAC would change under every sandbox whenever ports come and go.
 */
export function bridgeMac(bridge: string, hash: (s: string) => string): string {
  const h = hash(bridge);
  return ['02', '77', h.slice(0, 2), h.slice(2, 4), h.slice(4, 6), h.slice(6, 8)].join(':');
}

/**
 * The whole filter of one bridge, one atomic `nft -f` batch: creates tables, sets and chains if
 * missing (`add` is idempotent), replaces the chains' rules, keeps the sets' elements, and
 * (re-)adds `pins` (ports found alive, e.g. after a restart). `ipv6` false: no IPv6 stack on the
 * host, so no ip6 table.
 */
export function filterSetupScript(bridge: string, opts: { ipv6: boolean; pins?: PortPin[] }): string {
  const t = filterTable(bridge);
  const b = `bridge ${t}`;
  const lines = [
    `add table ${b}`,
    // Ports of this bridge that the filter covers: the bridge family sees every bridge on the
    // host, and this kernel may lack `meta ibrname`, so the ports themselves say "ours".
    `add set ${b} ports { type ifname; }`,
    `add set ${b} macs { type ifname . ether_addr; }`,
    `add set ${b} ipv4 { type ifname . ether_addr . ipv4_addr; }`,
    `add chain ${b} from_sandboxes { type filter hook prerouting priority -200; policy accept; }`,
    `add chain ${b} to_sandboxes { type filter hook postrouting priority -200; policy accept; }`,
    `flush chain ${b} from_sandboxes`,
    `flush chain ${b} to_sandboxes`,
    `add rule ${b} from_sandboxes iifname != @ports accept`,
    `add rule ${b} from_sandboxes iifname . ether saddr != @macs drop`,
    // Fixed ARP layout (Ethernet/IPv4), else the sender fields are not where nft reads them.
    `add rule ${b} from_sandboxes ether type arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4 ` +
      `iifname . arp saddr ether . arp saddr ip @ipv4 accept`,
    `add rule ${b} from_sandboxes ether type ip icmp type redirect drop`,
    `add rule ${b} from_sandboxes ether type ip udp sport 67 drop`,
    `add rule ${b} from_sandboxes ether type ip iifname . ether saddr . ip saddr @ipv4 accept`,
    `add rule ${b} from_sandboxes drop`,
    `add rule ${b} to_sandboxes oifname != @ports accept`,
    `add rule ${b} to_sandboxes ether daddr & 01:00:00:00:00:00 == 01:00:00:00:00:00 accept`,
    `add rule ${b} to_sandboxes oifname . ether daddr @macs accept`,
    `add rule ${b} to_sandboxes drop`,
  ];
  if (opts.ipv6) {
    // The host firewall for IPv6 (iptables in network.ts is IPv4 only). The gateway has no IPv6
    // address (network.ts disables IPv6 on the bridge), sandboxes have none either and the
    // platform never opens IPv6 connections to them: nothing from the bridge is accepted, not
    // even ESTABLISHED, and nothing is forwarded. Defense in depth behind the two layers above.
    const h = `ip6 ${t}`;
    lines.push(
      `add table ${h}`,
      `add chain ${h} input { type filter hook input priority -10; policy accept; }`,
      `add chain ${h} forward { type filter hook forward priority -10; policy accept; }`,
      `flush chain ${h} input`,
      `flush chain ${h} forward`,
      `add rule ${h} input iifname "${bridge}" drop`,
      `add rule ${h} forward iifname "${bridge}" drop`,
      `add rule ${h} forward oifname "${bridge}" drop`,
    );
  }
  for (const pin of opts.pins ?? []) lines.push(...pinLines(t, pin));
  return lines.join('\n') + '\n';
}

function elements(pin: PortPin): [string, string][] {
  assertIfname(pin.veth);
  if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(pin.mac)) throw new Error(`invalid MAC ${pin.mac}`);
  macFromIp(0, pin.ip); // validates
  return [
    ['ports', `"${pin.veth}"`],
    ['macs', `"${pin.veth}" . ${pin.mac}`],
    ['ipv4', `"${pin.veth}" . ${pin.mac} . ${pin.ip}`],
  ];
}

function pinLines(table: string, pin: PortPin): string[] {
  return elements(pin).map(([set, el]) => `add element bridge ${table} ${set} { ${el} }`);
}

/** Pins a port (create path): one `nft -f`; adding an existing element is a no-op. */
export function pinScript(bridge: string, pin: PortPin): string {
  return pinLines(filterTable(bridge), pin).join('\n') + '\n';
}

/**
 * Unpins a port (delete path). nft 1.0.6 has no `destroy`, and `delete` of a missing element
 * fails the batch: adding first makes the delete always succeed, so this is idempotent.
 */
export function unpinScript(bridge: string, pin: PortPin): string {
  const t = filterTable(bridge);
  return (
    elements(pin)
      .flatMap(([set, el]) => [
        `add element bridge ${t} ${set} { ${el} }`,
        `delete element bridge ${t} ${set} { ${el} }`,
      ])
      .join('\n') + '\n'
  );
}

/** Ports of `ip -j link show master <bridge>` that this code made, as pins (restart re-pin). */
export function pinsOfPorts(json: string): PortPin[] {
  const links = JSON.parse(json.trim() || '[]') as { ifname?: string; address?: string }[];
  const pins: PortPin[] = [];
  for (const l of links) {
    const ip = l.ifname && l.address ? ipOfHostVethMac(l.address) : null;
    if (ip && l.ifname && IFNAME.test(l.ifname)) pins.push({ veth: l.ifname, mac: sandboxMac(ip), ip });
  }
  return pins;
}
