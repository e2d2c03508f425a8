// The proxy runs in the platform's network namespace, so "connect to X" must never reach the
// platform's own private services: loopback (the management API, PostgreSQL), link-local, the
// sandbox bridge and any other range the caller adds. Every address is checked after name
// resolution, and the connection is made to the checked address (no second lookup, so a DNS
// answer cannot change between check and connect).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export type Lookup = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export class BlockedDestinationError extends Error {}

/** Ranges no sandbox may reach through the proxy, whatever its policy says. */
export function alwaysBlocked(extraCidrs: readonly string[] = []): BlockList {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('0.0.0.0', 8, 'ipv4');
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addSubnet('224.0.0.0', 4, 'ipv4');
  list.addSubnet('255.255.255.255', 32, 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addAddress('::', 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6');
  list.addSubnet('ff00::', 8, 'ipv6');
  list.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  for (const cidr of extraCidrs) {
    const [addr = '', bits = ''] = cidr.split('/');
    const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(addr, Number(bits || (family === 'ipv6' ? 128 : 32)), family);
  }
  return list;
}

export function isBlocked(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A `lookup` for net/http/https that refuses blocked answers. `resolve` defaults to dns.lookup. */
export function guardedLookup(blocked: BlockList, resolve: Lookup = dnsLookup as unknown as Lookup): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, answer) => {
      if (err) return callback(err, '', 0);
      const all = (Array.isArray(answer) ? answer : [{ address: answer, family: isIP(answer) }]).filter(
        (a) => !isBlocked(blocked, a.address),
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
