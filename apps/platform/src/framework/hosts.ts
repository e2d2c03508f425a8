/**
 * Host-style public addresses (ARCHITECTURE.md "Addresses"): sandboxes at
 * `sbx-<name>-<ws>.<region>.<domain>` (gateway/sandbox-host-label.ts), previews at `<preview-id>.<region>.preview.<domain>`. The
 * default domain is `localhost` (`*.localhost` resolves to loopback, RFC 6761). The port is a
 * function because main.ts learns it only after listening.
 */
import { encodeSandboxLabel, encodeWorkloadLabel } from './sandbox-host-label.js';

export interface HostConfig {
  scheme: 'http' | 'https';
  domain: string;
  region: string;
  /** Port shown in URLs; undefined for the scheme's default port. */
  port: () => number | undefined;
}

export const DEFAULT_HOSTS: HostConfig = {
  scheme: 'http',
  domain: 'localhost',
  region: 'local',
  port: () => undefined,
};

function origin(hosts: HostConfig, host: string): string {
  const port = hosts.port();
  const shown =
    port === undefined || (hosts.scheme === 'http' ? port === 80 : port === 443) ? '' : `:${port}`;
  return `${hosts.scheme}://${host}${shown}`;
}

export function sandboxUrl(
  hosts: HostConfig,
  workspace: string,
  name: string,
  region = hosts.region,
): string {
  // '-' in the name doubled: one host per (workspace, name), issue 19 item 12.
  return origin(hosts, `${encodeSandboxLabel(workspace, name)}.${region}.${hosts.domain}`);
}

/**
 * The hostnames a sandbox is reached at, with and without the region label (sandbox-address.ts
 * accepts both), plus the platform's own (path-style URLs): what its /mcp may see in Host and
 * Origin (issue 14 item 7, DNS rebinding). Other sandboxes' and previews' hosts are not in it.
 */
export function sandboxHostnames(
  hosts: Pick<HostConfig, 'domain' | 'region'>,
  workspace: string,
  name: string,
  platformHostnames: readonly string[],
): string[] {
  // The plain form `sbx-<name>-<ws>` too: the vendor SDK builds it, and the gateway resolves it to
  // this sandbox when that reading is the caller's only one (sandbox-address.ts).
  const labels = new Set([encodeSandboxLabel(workspace, name), `sbx-${name}-${workspace}`]);
  const names = [...labels].flatMap((l) => [`${l}.${hosts.region}.${hosts.domain}`, `${l}.${hosts.domain}`]);
  return [...names, ...platformHostnames];
}

/**
 * The platform's own hostnames: its public URL's, the listener's (unless a wildcard, which names
 * no host: set TARMAC_PUBLIC_URL then) and the service domain. Loopback names are always allowed.
 */
export function platformHostnames(
  publicUrl: string | undefined,
  listenHost: string,
  domain: string,
): string[] {
  const names = [domain.toLowerCase()];
  if (publicUrl) {
    try {
      names.push(new URL(publicUrl).hostname.toLowerCase());
    } catch {
      /* an unparsable public URL names no host */
    }
  }
  if (listenHost !== '0.0.0.0' && listenHost !== '::') {
    names.push(listenHost.includes(':') ? `[${listenHost}]` : listenHost.toLowerCase());
  }
  return [...new Set(names)];
}

/** First label prefix of an application's own host (planes/run README "Applications"). */
export const APP_LABEL_PREFIX = 'app-';

/** An application's own hostname: `app-<name>-<ws>.<region>.<domain>` ('-' in the name doubled). */
export function applicationHostname(
  hosts: Pick<HostConfig, 'domain' | 'region'>,
  workspace: string,
  name: string,
): string {
  return `${encodeWorkloadLabel(APP_LABEL_PREFIX, workspace, name)}.${hosts.region}.${hosts.domain}`;
}

/** `metadata.url` of an application (its own host, http or https like every host-style URL). */
export function applicationUrl(hosts: HostConfig, workspace: string, name: string): string {
  return origin(hosts, applicationHostname(hosts, workspace, name));
}

/** The URL of one of an application's extra hosts (`spec.urls[]`), with the platform's port. */
export function hostUrl(hosts: HostConfig, hostname: string): string {
  return origin(hosts, hostname);
}

export function previewHostUrl(hosts: HostConfig, previewId: string, region = hosts.region): string {
  return origin(hosts, `${previewId}.${region}.preview.${hosts.domain}`);
}

/** A preview on a custom domain (reference §5.2: `<prefix>.preview.<custom-domain>`). */
export function customDomainUrl(
  hosts: HostConfig,
  customDomain: string,
  prefixUrl: string | undefined,
): string {
  return origin(hosts, prefixUrl ? `${prefixUrl}.preview.${customDomain}` : `preview.${customDomain}`);
}
