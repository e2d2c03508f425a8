/**
 * Which application a request's Host names (issue 16 "Applications: long-running public
 * deployments on their own URL"; README "Applications"):
 *  - its own host `app-<name>-<ws>[.<region>].<domain>` (reference control-plane.md §5.2
 *    per-workload hostnames, `app-` beside `sbx-`/`agt-`/`mcp-`; '-' in the name doubled as in
 *    sandbox hosts, framework/sandbox-host-label.ts) — matched by its shape, so an unknown
 *    application's host is the run gateway's 404;
 *  - a host one of `spec.urls[]` claims (`{subdomain}.{domain}`, `{domain}`, `{subdomain}.{platform
 *    domain}`) — matched only when an application claims it; any other host is not ours and goes
 *    on to the platform (its own hostname may be anything).
 * The whole path and query go to the application. The claimed-host table is rebuilt from the run
 * controller's records when a pass replaced them (a map lookup per request otherwise).
 */
import type { IncomingMessage } from 'node:http';
import { decodeWorkloadLabel } from '../../framework/sandbox-host-label.js';
import { APP_LABEL_PREFIX } from '../../framework/hosts.js';
import type { RunAddress } from './run-address.js';
import type { RunRecord } from './run-ports.js';

/** The hostname of a Host header: lowercased, without port or trailing dot; none for IP literals. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host || host.startsWith('[')) return undefined;
  return host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
}

/** `app-<name>-<ws>[.<region>].<domain>` → the application it names, whether or not it exists. */
export function ownHostAddress(
  hostname: string,
  domain: string,
): { workspace: string; name: string } | undefined {
  const suffix = `.${domain.toLowerCase()}`;
  if (!hostname.startsWith(APP_LABEL_PREFIX) || !hostname.endsWith(suffix)) return undefined;
  const labels = hostname.slice(0, -suffix.length).split('.');
  if (labels.length > 2 || !labels[0]) return undefined;
  return decodeWorkloadLabel(APP_LABEL_PREFIX, labels[0]);
}

export class AppHosts {
  private source: ReadonlyMap<string, RunRecord> | undefined;
  private claimed = new Map<string, { workspace: string; name: string }>();
  /** The last Host read and its hostname: clients send the same Host again and again. */
  private lastHost: { host: string | undefined; hostname: string | undefined } | undefined;
  private lastOwn: { hostname: string; app: { workspace: string; name: string } | undefined } | undefined;

  constructor(
    private readonly records: () => ReadonlyMap<string, RunRecord>,
    private readonly domain: string,
    /** The platform's own hostnames: never an application's, whatever a record claims. */
    private readonly reserved: readonly string[] = [],
  ) {}

  /** The application address of the request, or undefined when its Host is no application's. */
  match(req: IncomingMessage): RunAddress | undefined {
    const hostname = this.hostnameOf(req.headers.host);
    if (!hostname) return undefined;
    const app = this.table().get(hostname) ?? this.ownHost(hostname);
    if (!app) return undefined;
    const url = req.url ?? '/';
    return { kind: 'application', ...app, path: url.startsWith('/') ? url : `/${url}` };
  }

  /**
   * The Host's hostname; undefined for an IP literal (the platform's own address, whatever an
   * (old) record claims).
   */
  private hostnameOf(host: string | undefined): string | undefined {
    const last = this.lastHost;
    if (last && last.host === host) return last.hostname;
    let hostname = hostnameOf(host);
    if (hostname && /\.\d+$|^\d+$/.test(hostname)) hostname = undefined;
    this.lastHost = { host, hostname };
    return hostname;
  }

  private ownHost(hostname: string): { workspace: string; name: string } | undefined {
    const last = this.lastOwn;
    if (last && last.hostname === hostname) return last.app;
    const app = ownHostAddress(hostname, this.domain);
    this.lastOwn = { hostname, app };
    return app;
  }

  private table(): Map<string, { workspace: string; name: string }> {
    const records = this.records();
    if (records === this.source) return this.claimed;
    // One host, one application: the catalogue refuses a second claim (409); should two claims
    // still exist (two writes racing), the first listed (the oldest) keeps the host.
    const claimed = new Map<string, { workspace: string; name: string }>();
    for (const r of records.values()) {
      if (r.kind !== 'application') continue;
      for (const h of r.hosts) {
        if (!claimed.has(h) && !this.reserved.includes(h))
          claimed.set(h, { workspace: r.workspace, name: r.name });
      }
    }
    this.source = records;
    this.claimed = claimed;
    return claimed;
  }
}
