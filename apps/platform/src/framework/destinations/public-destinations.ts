/**
 * Guards for destinations a tenant names and the platform calls from its own network namespace:
 * model upstreams (planes/model-gateway) and async-request callbacks (planes/run/triggers).
 * Public addresses only by default — on top of the guard's always-blocked loopback, link-local,
 * multicast and unique-local ranges, the host's own addresses and bridges, RFC 1918, shared
 * address space (RFC 6598), benchmarking (RFC 2544), IETF protocol assignments and documentation
 * ranges — unless an operator allow-list says more; `strictGuard` ignores the allow-list (for the
 * platform's own port, which no tenant destination may reach whatever the list says).
 */
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { DestinationGuard } from './destination-guard.js';
import { HostAddresses } from './host-addresses.js';

export const NON_PUBLIC_CIDRS = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '198.18.0.0/15',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '2001:db8::/32',
] as const;

export function publicDestinationGuards(allowCidrs: readonly string[]): {
  guard: DestinationGuard;
  strictGuard: DestinationGuard;
} {
  const hostAddresses = new HostAddresses({
    interfaces: networkInterfaces,
    isBridge: (name) => /^[\w.:-]+$/.test(name) && existsSync(`/sys/class/net/${name}/bridge`),
  });
  const options = { blockedCidrs: NON_PUBLIC_CIDRS, hostAddresses };
  return {
    guard: new DestinationGuard({ ...options, allowCidrs }),
    strictGuard: new DestinationGuard(options),
  };
}
