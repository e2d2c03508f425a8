// The host's own addresses, as the egress proxy must refuse them (issue 19 item 4): the proxy runs
// in the host's network namespace, so "connect to 192.168.1.5" (the host's LAN address), to
// 172.17.0.1 (docker0) or to another bridge's gateway reaches whatever listens on 0.0.0.0 / [::]
// there, exactly like loopback would. Every address of every local interface is refused, and the
// whole subnet of every *bridge* (other platforms' sandbox bridges, docker0, libvirt's virbr0):
// what sits behind a bridge on this host is the host's own business, not the internet. Neighbours
// on a plain interface's subnet (the LAN, a veth) are not refused by this rule.
//
// Read from os.networkInterfaces() (getifaddrs, tens of µs) at most once per `maxAgeMs`, lazily on
// a decision: an address added to the host is refused within that time.
import type { NetworkInterfaceInfo } from 'node:os';
import { BlockList } from 'node:net';
import { stripZone } from './address-forms.js';

export interface HostAddressSources {
  /** os.networkInterfaces (main wiring passes it; tests pass a table). */
  interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
  /** Whether an interface is a bridge (/sys/class/net/<name>/bridge exists). */
  isBridge: (name: string) => boolean;
  now?: () => number;
  maxAgeMs?: number;
}

export interface HostAddressSnapshot {
  list: BlockList;
  /** What went in, for messages and tests: `addr` or `net/bits` (bridges). */
  entries: string[];
}

export class HostAddresses {
  private snapshot: HostAddressSnapshot | undefined;
  private takenAt = 0;

  constructor(private readonly s: HostAddressSources) {}

  current(): HostAddressSnapshot {
    const now = (this.s.now ?? Date.now)();
    if (!this.snapshot || now - this.takenAt >= (this.s.maxAgeMs ?? 2000)) {
      this.snapshot = read(this.s);
      this.takenAt = now;
    }
    return this.snapshot;
  }
}

function read(s: HostAddressSources): HostAddressSnapshot {
  const list = new BlockList();
  const entries: string[] = [];
  for (const [name, infos] of Object.entries(s.interfaces())) {
    let bridge: boolean | undefined;
    for (const info of infos ?? []) {
      const type = info.family === 'IPv6' ? 'ipv6' : 'ipv4';
      const address = stripZone(info.address);
      try {
        list.addAddress(address, type);
        entries.push(address);
        bridge ??= s.isBridge(name);
        const [net = '', bits = ''] = (info.cidr ?? '').split('/');
        if (bridge && net && bits) {
          list.addSubnet(stripZone(net), Number(bits), type);
          entries.push(`${stripZone(net)}/${bits}`);
        }
      } catch {
        // an address node reports but BlockList cannot take: nothing to add
      }
    }
  }
  return { list, entries };
}
