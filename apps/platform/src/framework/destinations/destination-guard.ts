// The proxy runs in the platform's network namespace, so "connect to X" must never reach the
// platform's own private services (issue 19 item 4): loopback (the management API, PostgreSQL),
// link-local, unique-local, multicast, unspecified, the sandbox bridge, and every address of the
// host and its bridges (host-addresses.ts) — in every notation (address-forms.ts: IPv4-mapped,
// -compatible and -translated IPv6, NAT64, 6to4, Teredo). Every address is checked after name
// resolution, and the connection is made to the checked address (no second lookup, so a DNS
// answer cannot change between check and connect: no rebinding). An operator allow-list
// (TARMAC_EGRESS_ALLOW_CIDRS, read by main.ts) opens specific internal destinations.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { embeddedIpv4, stripZone } from './address-forms.js';
import type { HostAddresses } from './host-addresses.js';

export type Lookup = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export class BlockedDestinationError extends Error {}

/** Parses `a.b.c.d/n,x::/n,…`; throws naming `field` on a bad entry (main.ts reports it). */
export function parseCidrList(text: string | undefined, field: string): string[] {
  const out: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const cidr = raw.trim();
    if (!cidr) continue;
    const [addr = '', bits] = cidr.split('/');
    const family = isIP(addr);
    const max = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max))) {
      throw new Error(`${field}: "${cidr}" is not an IPv4 or IPv6 CIDR (like 10.0.5.0/24 or fd00:1::/64)`);
    }
    out.push(bits === undefined ? `${addr}/${max}` : cidr);
  }
  return out;
}

function addCidrs(list: BlockList, cidrs: readonly string[]): void {
  for (const cidr of cidrs) {
    const [addr = '', bits = ''] = cidr.split('/');
    const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(addr, Number(bits || (family === 'ipv6' ? 128 : 32)), family);
  }
}

/** Ranges no sandbox may reach through the proxy, whatever its policy says. */
export function alwaysBlocked(extraCidrs: readonly string[] = []): BlockList {
  const list = new BlockList();
  list.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", 0.0.0.0 = any local address
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
  list.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, and 255.255.255.255 broadcast
  list.addAddress('::', 'ipv6');
  list.addAddress('::1', 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6'); // link-local
  list.addSubnet('fec0::', 10, 'ipv6'); // site-local (deprecated, still means "here")
  list.addSubnet('fc00::', 7, 'ipv6'); // unique-local
  list.addSubnet('ff00::', 8, 'ipv6'); // multicast
  list.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use NAT64 (RFC 8215), any embedding
  addCidrs(list, extraCidrs);
  return list;
}

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** Whether `list` holds the address or any IPv4 address it embeds. Non-addresses: false. */
export function isBlocked(list: BlockList, address: string): boolean {
  const a = stripZone(address);
  if (isIP(a) === 0) return false;
  return list.check(a, familyOf(a)) || embeddedIpv4(a).some((v4) => list.check(v4, 'ipv4'));
}

export interface DestinationGuardOptions {
  /** CIDRs refused on top of `alwaysBlocked` (the sandbox bridge). */
  blockedCidrs?: readonly string[];
  /** The host's own addresses and bridges, refreshed (host-addresses.ts); none in unit tests. */
  hostAddresses?: HostAddresses;
  /** Operator allow-list: these destinations pass even when a rule above refuses them. */
  allowCidrs?: readonly string[];
}

/** The one place that says whether the proxy may connect to an address. */
export class DestinationGuard {
  private readonly blocked: BlockList;
  private readonly allowed: BlockList | undefined;

  constructor(private readonly o: DestinationGuardOptions = {}) {
    this.blocked = alwaysBlocked(o.blockedCidrs);
    if (o.allowCidrs && o.allowCidrs.length > 0) {
      this.allowed = new BlockList();
      addCidrs(this.allowed, o.allowCidrs);
    }
  }

  /** True when `address` (an IP literal, any notation) must not be connected to. */
  blocks(address: string): boolean {
    const a = stripZone(address);
    if (isIP(a) === 0) return false; // a name: checked once resolved (guardedLookup)
    if (this.allowed && isBlocked(this.allowed, a)) return false;
    if (isBlocked(this.blocked, a)) return true;
    const host = this.o.hostAddresses?.current().list;
    return host !== undefined && isBlocked(host, a);
  }

  /** A static BlockList of the same refusals now (for callers that take one: tunnel endpoints). */
  snapshot(): BlockList {
    const list = alwaysBlocked(this.o.blockedCidrs);
    for (const e of this.o.hostAddresses?.current().entries ?? []) addCidrs(list, [e]);
    return list;
  }
}

/** A `lookup` for net/http/https that refuses blocked answers. `resolve` defaults to dns.lookup. */
export function guardedLookup(
  blocks: (address: string) => boolean,
  resolve: Lookup = dnsLookup as unknown as Lookup,
): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, answer) => {
      if (err) return callback(err, '', 0);
      const all = (Array.isArray(answer) ? answer : [{ address: answer, family: isIP(answer) }]).filter(
        (a) => !blocks(a.address),
      );
      if (all.length === 0) {
        const e: NodeJS.ErrnoException = new BlockedDestinationError(
          `"${hostname}" resolves only to addresses the egress proxy never connects to`,
        );
        e.code = 'EBLOCKED';
        return callback(e, '', 0);
      }
      if (options.all) return callback(null, all);
      const first = all[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/** A fixed name table, for tests that must resolve names only to their own namespaces. */
export function staticLookup(table: Readonly<Record<string, string>>): Lookup {
  return (hostname, _options, callback) => {
    const address = table[hostname.toLowerCase()];
    if (address === undefined) {
      const e: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      e.code = 'ENOTFOUND';
      return callback(e, '', 0);
    }
    callback(null, [{ address, family: isIP(address) === 6 ? 6 : 4 }]);
  };
}

/** A few fixed names (tests, like curl's --resolve), everything else through `fallback`. */
export function overrideLookup(table: Readonly<Record<string, string>>, fallback: Lookup): Lookup {
  const fixed = staticLookup(table);
  return (hostname, options, callback) =>
    hostname.toLowerCase() in table
      ? fixed(hostname, options, callback)
      : fallback(hostname, options, callback);
}

/** Parses `name=address,name=address` (TARMAC_EGRESS_RESOLVE). */
export function parseResolveList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const [name, address] = pair.split('=').map((s) => s.trim());
    if (name && address && isIP(address)) out[name.toLowerCase()] = address;
  }
  return out;
}
