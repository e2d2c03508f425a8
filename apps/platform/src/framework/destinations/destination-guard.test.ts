import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { embeddedIpv4, ipv6Bytes } from './address-forms.js';
import { DestinationGuard, guardedLookup, parseCidrList, staticLookup } from './destination-guard.js';
import { HostAddresses } from './host-addresses.js';

const nic = (address: string, cidr: string, family: 'IPv4' | 'IPv6'): NetworkInterfaceInfo =>
  ({
    address,
    cidr,
    family,
    netmask: '',
    mac: '00:00:00:00:00:00',
    internal: false,
    scopeid: 0,
  }) as NetworkInterfaceInfo;

/** A host: a LAN interface, a bridge of another platform, docker0, and a global IPv6 address. */
const interfaces = {
  lo: [nic('127.0.0.1', '127.0.0.1/8', 'IPv4'), nic('::1', '::1/128', 'IPv6')],
  eth0: [nic('192.168.77.5', '192.168.77.5/24', 'IPv4'), nic('2001:db8:5::5', '2001:db8:5::5/64', 'IPv6')],
  'tarmac-other': [nic('10.201.0.1', '10.201.0.1/16', 'IPv4')],
  docker0: [nic('172.17.0.1', '172.17.0.1/16', 'IPv4')],
};
const bridges = new Set(['tarmac-other', 'docker0']);

function guard(allowCidrs: string[] = []): DestinationGuard {
  return new DestinationGuard({
    blockedCidrs: ['10.200.0.0/16'], // this platform's sandbox bridge
    hostAddresses: new HostAddresses({ interfaces: () => interfaces, isBridge: (n) => bridges.has(n) }),
    allowCidrs,
  });
}

// Issue 19 item 4: every notation of every address that belongs to the host or its bridges.
const BLOCKED: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.1.2.3', 'loopback range'],
  ['0.0.0.0', 'unspecified (= any local address)'],
  ['::', 'IPv6 unspecified'],
  ['::1', 'IPv6 loopback'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['fe80::1', 'IPv6 link-local'],
  ['fe80::1%eth0', 'IPv6 link-local with a zone'],
  ['fd12:3456::1', 'unique-local'],
  ['fc00::1', 'unique-local (fc half)'],
  ['fec0::1', 'site-local'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'IPv6 multicast'],
  ['255.255.255.255', 'broadcast'],
  ['10.200.0.1', 'the sandbox bridge gateway (this platform)'],
  ['10.200.3.4', 'another sandbox'],
  ['192.168.77.5', 'the host LAN address'],
  ['2001:db8:5::5', "the host's global IPv6 address"],
  ['10.201.0.1', "another bridge's address"],
  ['10.201.9.9', "a sandbox behind another platform's bridge"],
  ['172.17.0.1', 'docker0'],
  ['172.17.0.2', 'a container behind docker0'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:192.168.77.5', 'IPv4-mapped host address'],
  ['::ffff:c0a8:4d05', 'IPv4-mapped host address, hex'],
  ['::192.168.77.5', 'IPv4-compatible host address'],
  ['::ffff:0:192.168.77.5', 'IPv4-translated host address'],
  ['64:ff9b::192.168.77.5', 'NAT64 well-known prefix, host address'],
  ['64:ff9b::7f00:1', 'NAT64 loopback'],
  ['64:ff9b:1::1', 'local-use NAT64'],
  ['2002:c0a8:4d05::1', '6to4 of the host address'],
  ['2001:0:c0a8:4d05::1', 'Teredo server = host address'],
];

describe('destination guard: notations table', () => {
  const g = guard();
  it.each(BLOCKED)('refuses %s (%s)', (address) => {
    expect(g.blocks(address)).toBe(true);
  });

  it('reads the Teredo client address (stored inverted)', () => {
    // client 127.0.0.1 inverted = 80ff:fffe
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:80ff:fffe')).toEqual(['65.54.227.120', '127.0.0.1']);
    expect(g.blocks('2001:0:4136:e378:8000:63bf:80ff:fffe')).toBe(true);
  });

  it.each([
    ['93.184.216.34', 'a public IPv4 address'],
    ['2606:4700::1111', 'a public IPv6 address'],
    ['192.168.77.6', 'a LAN neighbour (not the host, not behind a bridge)'],
    ['::ffff:93.184.216.34', 'a mapped public address'],
    ['example.com', 'a name (checked once resolved)'],
  ])('lets %s through (%s)', (address) => {
    expect(g.blocks(address)).toBe(false);
  });

  it('opens exactly what the operator allow-list names', () => {
    const open = guard(parseCidrList('172.17.0.0/24, 192.168.77.5', 'TARMAC_EGRESS_ALLOW_CIDRS'));
    expect(open.blocks('172.17.0.2')).toBe(false);
    expect(open.blocks('::ffff:172.17.0.2')).toBe(false);
    expect(open.blocks('192.168.77.5')).toBe(false);
    expect(open.blocks('172.17.1.2')).toBe(true);
    expect(open.blocks('127.0.0.1')).toBe(true);
    expect(() => parseCidrList('10.0.0.0/33', 'TARMAC_EGRESS_ALLOW_CIDRS')).toThrow(
      /TARMAC_EGRESS_ALLOW_CIDRS/,
    );
    expect(() => parseCidrList('nope', 'X')).toThrow(/"nope"/);
  });

  it('sees an address added to the host after its snapshot expired', () => {
    let now = 0;
    const table: Record<string, NetworkInterfaceInfo[]> = {
      eth0: [nic('192.168.77.5', '192.168.77.5/24', 'IPv4')],
    };
    const g2 = new DestinationGuard({
      hostAddresses: new HostAddresses({ interfaces: () => table, isBridge: () => false, now: () => now }),
    });
    expect(g2.blocks('192.168.77.9')).toBe(false);
    table.eth1 = [nic('192.168.77.9', '192.168.77.9/24', 'IPv4')];
    now = 2500;
    expect(g2.blocks('192.168.77.9')).toBe(true);
  });

  it('parses IPv6 text, dotted tails included', () => {
    expect(Array.from(ipv6Bytes('::ffff:1.2.3.4') ?? [])).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4,
    ]);
    expect(ipv6Bytes('1.2.3.4')).toBeUndefined();
  });
});

describe('guarded lookup: names are checked once resolved', () => {
  const g = guard();
  const lookup = guardedLookup(
    (a) => g.blocks(a),
    staticLookup({
      'rebind.test': '192.168.77.5',
      'mapped.test': '::ffff:127.0.0.1',
      'public.test': '93.184.216.34',
    }),
  );
  const resolve = (name: string) =>
    new Promise<{ code?: string; address?: string }>((r) =>
      lookup(name, {}, (err, address) => r(err ? { code: err.code ?? '' } : { address: address as string })),
    );

  it('refuses names that resolve to the host, in any form, and answers the checked address', async () => {
    expect(await resolve('rebind.test')).toEqual({ code: 'EBLOCKED' });
    expect(await resolve('mapped.test')).toEqual({ code: 'EBLOCKED' });
    expect(await resolve('public.test')).toEqual({ address: '93.184.216.34' });
  });
});
