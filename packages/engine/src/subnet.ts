// IPv4 CIDR arithmetic for the sandbox bridge: gateway = first host, sandboxes after it.

export interface Subnet {
  network: number;
  prefix: number;
  gateway: string;
  /** First and last assignable sandbox addresses (inclusive) as integers. */
  first: number;
  last: number;
}

export function parseSubnet(cidr: string): Subnet {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
  if (!m) throw new Error(`invalid subnet ${cidr}`);
  const prefix = Number(m[2]);
  if (prefix < 8 || prefix > 28) throw new Error(`subnet prefix must be 8..28: ${cidr}`);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const network = (ipToInt(m[1] ?? '') & mask) >>> 0;
  const broadcast = (network | (~mask >>> 0)) >>> 0;
  return { network, prefix, gateway: intToIp(network + 1), first: network + 2, last: broadcast - 1 };
}

export function ipToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`invalid IPv4 address ${ip}`);
  }
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
