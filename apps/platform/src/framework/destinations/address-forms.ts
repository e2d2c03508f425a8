// The IPv4 addresses an IPv6 address also names (issue 19 item 4): a sandbox asking the proxy for
// `[::ffff:10.200.0.1]` or `[64:ff9b::7f00:1]` asks for the IPv4 host behind it, so every such
// form is checked as that IPv4 address too. Integer, octal and hex IPv4 spellings (`2130706433`,
// `0x7f.1`, `017700000001`) need nothing here: the WHATWG URL parser normalizes them in absolute
// URIs, and a CONNECT target that is not an IP literal goes through name resolution
// (getaddrinfo, inet_aton rules), whose answer is what the guard checks.
import { isIP } from 'node:net';

/** An IPv6 literal (zone id allowed, ignored) as 16 bytes, or undefined. */
export function ipv6Bytes(text: string): Uint8Array | undefined {
  const address = stripZone(text);
  if (isIP(address) !== 6) return undefined;
  let head = address;
  let tailV4: number[] = [];
  const lastColon = address.lastIndexOf(':');
  if (address.slice(lastColon + 1).includes('.')) {
    tailV4 = address
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    head = `${address.slice(0, lastColon + 1)}0:0`; // stand-in groups, replaced below
  }
  const [left = '', right] = head.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const all = right === undefined ? l : [...l, ...Array<number>(8 - l.length - r.length).fill(0), ...r];
  if (all.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  if (tailV4.length === 4) bytes.set(tailV4, 12);
  return bytes;
}

export function stripZone(address: string): string {
  const i = address.indexOf('%');
  return i < 0 ? address : address.slice(0, i);
}

const v4 = (b: Uint8Array, at: number): string => [b[at], b[at + 1], b[at + 2], b[at + 3]].join('.');
const zero = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);
const prefix = (b: Uint8Array, p: readonly number[]): boolean => p.every((x, i) => b[i] === x);

/**
 * The IPv4 addresses an IPv6 address reaches or stands for:
 *  - IPv4-mapped `::ffff:a.b.c.d` (what a dual-stack socket connects to as IPv4),
 *  - IPv4-compatible `::a.b.c.d` (deprecated; `::` and `::1` read as 0.0.0.0 and 0.0.0.1, blocked too),
 *  - IPv4-translated `::ffff:0:a.b.c.d` (SIIT),
 *  - NAT64 well-known prefix `64:ff9b::a.b.c.d` (RFC 6052; `64:ff9b:1::/48` is blocked whole),
 *  - 6to4 `2002:aabb:ccdd::/48` (RFC 3056),
 *  - Teredo `2001:0::/32`: the server address, and the client address (stored inverted).
 */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  if (!b) return [];
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return [v4(b, 12)];
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12)) return [v4(b, 12)];
  if (zero(b, 0, 12)) return [v4(b, 12)];
  if (prefix(b, [0x00, 0x64, 0xff, 0x9b]) && zero(b, 4, 12)) return [v4(b, 12)];
  if (prefix(b, [0x20, 0x02])) return [v4(b, 2)];
  if (prefix(b, [0x20, 0x01, 0x00, 0x00])) {
    const client = b.subarray(12, 16).map((x) => x ^ 0xff);
    return [v4(b, 4), v4(client, 0)];
  }
  return [];
}
