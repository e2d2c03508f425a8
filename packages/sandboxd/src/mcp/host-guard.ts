// DNS-rebinding protection of POST /mcp (issue 14 item 7; MCP spec "Streamable HTTP" §Security:
// servers MUST validate Origin; GHSA-w48q-cv73-mx4w). A page on evil.example whose name is
// rebound to the platform's address makes the browser send `Host: evil.example` and
// `Origin: http://evil.example`: both are refused with 403 unless the hostname is one the
// platform gave this sandbox (its own sandbox hosts and the platform's, TARMAC_SANDBOXD_MCP_HOSTS)
// or a loopback name. A request without Origin (a non-browser client) passes the Origin check.
//
// Hostnames, not host:port: the SDK transport's own `allowedHosts`/`allowedOrigins` compare the
// whole header, and the port a client sees (behind a TLS proxy: none) is not the one the platform
// listens on; the SDK's express middleware `hostHeaderValidation` compares hostnames too, as here.

/** Always allowed: a client on the same machine (what the MCP conformance suite calls localhost). */
export const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** The hostname of a `Host` value (`h`, `h:port`, `[v6]:port`), lower-case; undefined if malformed. */
export function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The hostname of an `Origin` value (`scheme://host[:port]`); undefined if malformed or `null`. */
function originHostname(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** Why the request is refused, or undefined when its Host and Origin are allowed. */
export function rebindingRefusal(headers: Headers, allowed: ReadonlySet<string>): string | undefined {
  // Host only: the platform gateway forwards the client's Host unchanged (proxy.ts), and a page
  // can set X-Forwarded-Host itself.
  const host = headers.get('host');
  const hostname = host ? hostnameOf(host) : undefined;
  if (!hostname || !allowed.has(hostname)) return `Invalid Host header: ${host ?? '(none)'}`;
  const origin = headers.get('origin');
  if (origin !== null) {
    const name = originHostname(origin);
    if (!name || !allowed.has(name)) return `Invalid Origin header: ${origin}`;
  }
  return undefined;
}

/** The allowed set: loopback names plus the configured ones (hostnames, any case). */
export function allowedHostnames(configured: readonly string[] = []): Set<string> {
  return new Set([...LOOPBACK_HOSTNAMES, ...configured.map((h) => h.trim().toLowerCase()).filter(Boolean)]);
}
