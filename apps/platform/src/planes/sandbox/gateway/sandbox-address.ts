/**
 * Where a request to a sandbox says it is going (spec "Sandbox API"; ARCHITECTURE.md table):
 *  - host-style: Host `sbx-<name>-<workspace>.<region>.<domain>` (the region label is optional);
 *  - path-style: `{run_url}/{workspace}/sandboxes/{name}/...` on the platform's own host.
 * Names and workspaces may both contain '-', so a host gives candidate splits, tried in order by
 * the caller against what exists.
 */
import { RESERVED_WORKSPACE_NAMES } from '../../../framework/reserved-names.js';

export interface SandboxTarget {
  /** (workspace, name) pairs to try, most likely first. */
  candidates: { workspace: string; name: string }[];
  /** Path and query to forward to sandboxd, always starting with '/'. */
  path: string;
}

const NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export function hostTarget(host: string | undefined, url: string, domain: string): SandboxTarget | undefined {
  if (!host) return undefined;
  const hostname = host.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${domain.toLowerCase()}`;
  if (!hostname.startsWith('sbx-') || !hostname.endsWith(suffix)) return undefined;
  const labels = hostname.slice(0, -suffix.length).split('.');
  if (labels.length > 2 || !labels[0]) return undefined; // sbx-…[.<region>]
  const both = labels[0].slice('sbx-'.length);
  const candidates: SandboxTarget['candidates'] = [];
  // Longest workspace first is as arbitrary as shortest; both are tried, so order only costs a miss.
  for (let i = both.indexOf('-'); i > 0; i = both.indexOf('-', i + 1)) {
    const name = both.slice(0, i);
    const workspace = both.slice(i + 1);
    if (NAME.test(name) && NAME.test(workspace)) candidates.push({ workspace, name });
  }
  return candidates.length > 0 ? { candidates, path: url.startsWith('/') ? url : `/${url}` } : undefined;
}

const PATH_STYLE = /^\/([a-z0-9][a-z0-9-]*)\/sandboxes\/([a-z0-9][a-z0-9-]*)(\/[^?]*)?(\?.*)?$/;

export function pathTarget(url: string): SandboxTarget | undefined {
  const m = PATH_STYLE.exec(url);
  if (!m || RESERVED_WORKSPACE_NAMES.has(m[1]!)) return undefined; // e.g. /v0/sandboxes/x
  return {
    candidates: [{ workspace: m[1]!, name: m[2]! }],
    path: `${m[3] ?? '/'}${m[4] ?? ''}`,
  };
}
