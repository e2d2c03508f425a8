// Domain patterns of `spec.network` (spec "Sandbox" → `spec.network`: "list of domain patterns
// (wildcard prefix `*.` is used)"). A pattern is an exact host name (`api.example.com`) or `*.`
// followed by a host name (`*.example.com`), which matches every name below it at any depth but
// not the apex itself — the usual meaning of a certificate-style wildcard, so `*.example.com`
// never silently opens `example.com`. Matching is case-insensitive and ignores a trailing dot.

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Lower-cases a host, strips a trailing dot and IPv6 brackets. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const m = IPV4.exec(name);
  if (m) return m.slice(1).every((o) => Number(o) <= 255);
  return name.split('.').every((label) => LABEL.test(label));
}

/** Why a pattern is not usable, or undefined when it is. */
export function patternProblem(pattern: string): string | undefined {
  const p = normalizeHost(pattern);
  if (p.length === 0) return 'is empty';
  if (p.startsWith('*.')) {
    const rest = p.slice(2);
    if (rest.includes('*')) return 'may use "*" only as the leading "*." wildcard';
    if (!isHostName(rest)) return 'is not a domain name after "*."';
    return undefined;
  }
  if (p.includes('*')) return 'may use "*" only as the leading "*." wildcard';
  if (!isHostName(p)) return 'is not a domain name';
  return undefined;
}

export function matchesPattern(host: string, pattern: string): boolean {
  const h = normalizeHost(host);
  const p = normalizeHost(pattern);
  if (p.startsWith('*.')) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return h === p;
}

/** The first pattern of `patterns` that matches `host`, for messages that name the rule. */
export function firstMatch(host: string, patterns: readonly string[]): string | undefined {
  return patterns.find((p) => matchesPattern(host, p));
}
