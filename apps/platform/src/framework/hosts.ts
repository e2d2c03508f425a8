/**
 * Host-style public addresses (ARCHITECTURE.md "Addresses"): sandboxes at
 * `sbx-<name>-<ws>.<region>.<domain>` (gateway/sandbox-host-label.ts), previews at `<preview-id>.<region>.preview.<domain>`. The
 * default domain is `localhost` (`*.localhost` resolves to loopback, RFC 6761). The port is a
 * function because main.ts learns it only after listening.
 */
import { encodeSandboxLabel } from './sandbox-host-label.js';

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
