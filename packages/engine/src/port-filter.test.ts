import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  bridgeMac,
  filterSetupScript,
  filterTable,
  hostVethMac,
  ipOfHostVethMac,
  pinScript,
  pinsOfPorts,
  sandboxMac,
  unpinScript,
} from './port-filter.js';

const pin = { veth: 'tv0123456789ab', mac: '02:74:0a:c8:00:05', ip: '10.200.0.5' };

/** `nft -c` parses and checks a batch against the kernel without changing anything (root only). */
function nftCheckUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  try {
    execFileSync('nft', ['-c', '-f', '-'], { input: 'add table bridge tarmac_probe\n', stdio: 'pipe' });
    return null;
  } catch (err) {
    return `nft unusable: ${String(err).slice(0, 80)}`;
  }
}

describe('port filter rules', () => {
  it('derives MACs from the address, and reads the address back from the host side', () => {
    expect(sandboxMac('10.200.0.5')).toBe('02:74:0a:c8:00:05');
    expect(hostVethMac('10.200.255.254')).toBe('02:76:0a:c8:ff:fe');
    expect(ipOfHostVethMac('02:76:0a:c8:ff:fe')).toBe('10.200.255.254');
    expect(ipOfHostVethMac('02:74:0a:c8:ff:fe')).toBeNull(); // a sandbox MAC, not a port
    expect(ipOfHostVethMac('72:a0:f5:1f:b5:a6')).toBeNull(); // a port made before pinning
    const mac = bridgeMac('tarmac0', (s) => createHash('sha256').update(s).digest('hex'));
    expect(mac).toMatch(/^02:77:([0-9a-f]{2}:){3}[0-9a-f]{2}$/);
    expect(() => sandboxMac('10.0.0.256')).toThrow();
  });

  it('scopes everything to tables named after the bridge and refuses names that could inject', () => {
    expect(filterTable('tarmace2e0')).toBe('tarmac_tarmace2e0');
    expect(filterTable('br-x.1')).toBe('tarmac_br_x_1');
    expect(() => filterTable('x"; flush ruleset')).toThrow(/invalid interface name/);
    expect(() => pinScript('tarmac0', { ...pin, veth: 'a b' })).toThrow(/invalid interface name/);
    expect(() => pinScript('tarmac0', { ...pin, mac: '02:74:zz:00:00:00' })).toThrow(/invalid MAC/);
  });

  it('drops every frame a port sends unless MAC, ARP sender and IPv4 source are its own', () => {
    const s = filterSetupScript('tarmac0', { ipv6: true });
    const rules = s.split('\n').filter((l) => l.includes(' from_sandboxes ') && l.startsWith('add rule'));
    expect(rules).toEqual([
      'add rule bridge tarmac_tarmac0 from_sandboxes iifname != @ports accept',
      'add rule bridge tarmac_tarmac0 from_sandboxes iifname . ether saddr != @macs drop',
      'add rule bridge tarmac_tarmac0 from_sandboxes ether type arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4 iifname . arp saddr ether . arp saddr ip @ipv4 accept',
      'add rule bridge tarmac_tarmac0 from_sandboxes ether type ip icmp type redirect drop',
      'add rule bridge tarmac_tarmac0 from_sandboxes ether type ip udp sport 67 drop',
      'add rule bridge tarmac_tarmac0 from_sandboxes ether type ip iifname . ether saddr . ip saddr @ipv4 accept',
      // IPv6 (NA, RA, DHCPv6), VLAN-tagged and any other frame: dropped.
      'add rule bridge tarmac_tarmac0 from_sandboxes drop',
    ]);
    expect(s).toContain('to_sandboxes oifname . ether daddr @macs accept');
    expect(
      s
        .trimEnd()
        .split('\n')
        .filter((l) => l.includes('to_sandboxes'))
        .at(-1),
    ).toBe('add rule bridge tarmac_tarmac0 to_sandboxes drop');
  });

  it('replaces only its own chains, never flushes a table or a set', () => {
    const s = filterSetupScript('tarmac0', { ipv6: true, pins: [pin] });
    const flushes = s.split('\n').filter((l) => /flush|delete/.test(l));
    expect(flushes).toEqual([
      'flush chain bridge tarmac_tarmac0 from_sandboxes',
      'flush chain bridge tarmac_tarmac0 to_sandboxes',
      'flush chain ip6 tarmac_tarmac0 input',
      'flush chain ip6 tarmac_tarmac0 forward',
    ]);
    // The chains are flushed before the pins are added again, in the same atomic batch.
    expect(s.indexOf('add element')).toBeGreaterThan(s.lastIndexOf('flush chain'));
  });

  it('drops all IPv6 from the bridge at the host and forwards none, when the host has IPv6', () => {
    const s = filterSetupScript('tarmac0', { ipv6: true });
    expect(s).toContain('add rule ip6 tarmac_tarmac0 input iifname "tarmac0" drop');
    expect(s).toContain('add rule ip6 tarmac_tarmac0 forward iifname "tarmac0" drop');
    expect(s).toContain('add rule ip6 tarmac_tarmac0 forward oifname "tarmac0" drop');
    expect(filterSetupScript('tarmac0', { ipv6: false })).not.toContain('ip6');
  });

  it('pins with three elements and unpins idempotently (add before delete)', () => {
    expect(pinScript('tarmac0', pin)).toBe(
      [
        'add element bridge tarmac_tarmac0 ports { "tv0123456789ab" }',
        'add element bridge tarmac_tarmac0 macs { "tv0123456789ab" . 02:74:0a:c8:00:05 }',
        'add element bridge tarmac_tarmac0 ipv4 { "tv0123456789ab" . 02:74:0a:c8:00:05 . 10.200.0.5 }',
        '',
      ].join('\n'),
    );
    const un = unpinScript('tarmac0', pin).trimEnd().split('\n');
    expect(un).toHaveLength(6);
    for (let i = 0; i < un.length; i += 2) {
      expect(un[i]).toMatch(/^add element/);
      expect(un[i + 1]).toBe(un[i]!.replace(/^add/, 'delete'));
    }
  });

  it('re-pins only the ports this code made, from `ip -j link show master`', () => {
    const json = JSON.stringify([
      { ifname: 'tv0123456789ab', address: '02:76:0a:c8:00:05' },
      { ifname: 'tvfedcba987654', address: '72:a0:f5:1f:b5:a6' },
      { ifname: 'other', address: 'aa:bb:cc:dd:ee:ff' },
    ]);
    expect(pinsOfPorts(json)).toEqual([pin]);
    expect(pinsOfPorts('')).toEqual([]);
    expect(pinsOfPorts('[]\n')).toEqual([]);
  });

  const noNft = nftCheckUnavailable();
  it.skipIf(noNft !== null)(
    `is accepted by this kernel's nftables${noNft ? ` (skipped: ${noNft})` : ''}`,
    () => {
      const script =
        filterSetupScript('tarmacut0', { ipv6: true, pins: [pin] }) + pinScript('tarmacut0', pin);
      // -c: checked against the kernel, nothing is changed.
      execFileSync('nft', ['-c', '-f', '-'], { input: script, stdio: 'pipe' });
    },
  );
});
