/**
 * Where a request to a sandbox says it is going (spec "Sandbox API"; ARCHITECTURE.md table):
 *  - host-style: Host `sbx-<name>-<workspace>.<region>.<domain>` (the region label is optional);
 *  - path-style: `{run_url}/{workspace}/sandboxes/{name}/...` on the platform's own host.
 * Names and workspaces may both contain '-': the host label's encoding (sandbox-host-label.ts)
 * has one canonical reading, and plain-form hosts of older URLs give legacy splits that the
 * gateway resolves only when exactly one of them is the caller's (issue 19 item 12).
 */
import { RESERVED_WORKSPACE_NAMES } from '../../../framework/reserved-names.js';
import { decodeSandboxLabel, legacySplits, type SandboxRef } from '../../../framework/sandbox-host-label.js';

export interface SandboxTarget {
  /** The one (workspace, name) the address names in the current encoding, if it is valid. */
  canonical: SandboxRef | undefined;
  /** Other readings of a plain-form host (`sbx-<name>-<ws>` with '-' in the name); may be empty. */
  legacy: SandboxRef[];
  /** Path and query to forward to sandboxd, always starting with '/'. */
  path: string;
}

export function hostTarget(host: string | undefined, url: string, domain: string): SandboxTarget | undefined {
  if (!host) return undefined;
  const hostname = host.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${domain.toLowerCase()}`;
  if (!hostname.startsWith('sbx-') || !hostname.endsWith(suffix)) return undefined;
  const labels = hostname.slice(0, -suffix.length).split('.');
  if (labels.length > 2 || !labels[0]) return undefined; // sbx-…[.<region>]
  const canonical = decodeSandboxLabel(labels[0]);
  const legacy = legacySplits(labels[0]).filter(
    (c) => c.workspace !== canonical?.workspace || c.name !== canonical.name,
  );
  if (!canonical && legacy.length === 0) return undefined;
  return { canonical, legacy, path: url.startsWith('/') ? url : `/${url}` };
}

const PATH_STYLE = /^\/([a-z0-9][a-z0-9-]*)\/sandboxes\/([a-z0-9][a-z0-9-]*)(\/[^?]*)?(\?.*)?$/;

export function pathTarget(url: string): SandboxTarget | undefined {
  const m = PATH_STYLE.exec(url);
  if (!m || RESERVED_WORKSPACE_NAMES.has(m[1]!)) return undefined; // e.g. /v0/sandboxes/x
  return {
    canonical: { workspace: m[1]!, name: m[2]! },
    legacy: [],
    path: `${m[3] ?? '/'}${m[4] ?? ''}`,
  };
}
