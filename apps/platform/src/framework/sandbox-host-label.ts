/**
 * The first DNS label of a sandbox's host (spec "Sandbox API": `sbx-<sandbox_name>-<workspace>`),
 * made unambiguous (issue 19 item 12). Names and workspaces both allow '-', so the plain form gave
 * workspace `team` + sandbox `x-ai` and workspace `ai-team` + sandbox `x` the same host.
 *
 * Encoding: every '-' of the sandbox name is doubled; one single '-' separates it from the
 * workspace, which is written as is: `sbx-x--ai-team` (team, x-ai) and `sbx-x-ai-team` (ai-team, x).
 * Decoding is the first dash run of odd length, which can only be a lone separator (a name neither
 * starts nor ends with '-', nor does a workspace), every even run before it halved. A name without
 * '-' encodes exactly like the plain form the reference's SDK and server build, so those hosts are
 * unchanged; only names with '-' get a new (canonical) host, which `metadata.url` now carries.
 *
 * Plain-form hosts of names with '-' still arrive (URLs handed out before). `legacySplits` lists
 * every (workspace, name) such a host could mean; the gateway routes one only when it is the single
 * match the caller can access, and never instead of the canonical reading (sandbox-gateway.ts).
 */
const NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export interface SandboxRef {
  workspace: string;
  name: string;
}

export const SANDBOX_LABEL_PREFIX = 'sbx-';

export function encodeSandboxLabel(workspace: string, name: string): string {
  return encodeWorkloadLabel(SANDBOX_LABEL_PREFIX, workspace, name);
}

/** The canonical reading of a label (`sbx-…`), or undefined when it is not a canonical label. */
export function decodeSandboxLabel(label: string): SandboxRef | undefined {
  return decodeWorkloadLabel(SANDBOX_LABEL_PREFIX, label);
}

/**
 * The same encoding under another kind's prefix (reference control-plane.md §5.2 per-workload
 * hostnames `{sbx|agt|mcp|mdl|job}-{name}-{ws}`; applications use `app-`, planes/run/app-hosts.ts).
 */
export function encodeWorkloadLabel(prefix: string, workspace: string, name: string): string {
  return `${prefix}${name.replace(/-/g, '--')}-${workspace}`;
}

export function decodeWorkloadLabel(prefix: string, label: string): SandboxRef | undefined {
  if (!label.startsWith(prefix)) return undefined;
  const both = label.slice(prefix.length);
  let name = '';
  let i = 0;
  while (i < both.length) {
    const c = both[i]!;
    if (c !== '-') {
      name += c;
      i++;
      continue;
    }
    let run = 0;
    while (both[i + run] === '-') run++;
    if (run % 2 === 1) {
      if (run !== 1) return undefined; // '---': would need a name ending or a workspace starting in '-'
      const workspace = both.slice(i + 1);
      return NAME.test(name) && NAME.test(workspace) ? { workspace, name } : undefined;
    }
    name += '-'.repeat(run / 2);
    i += run;
  }
  return undefined; // no separator
}

/** Every (workspace, name) the plain form `sbx-<name>-<workspace>` could mean, in split order. */
export function legacySplits(label: string): SandboxRef[] {
  if (!label.startsWith(SANDBOX_LABEL_PREFIX)) return [];
  const both = label.slice(SANDBOX_LABEL_PREFIX.length);
  const out: SandboxRef[] = [];
  for (let i = both.indexOf('-'); i > 0; i = both.indexOf('-', i + 1)) {
    const name = both.slice(0, i);
    const workspace = both.slice(i + 1);
    if (NAME.test(name) && NAME.test(workspace)) out.push({ workspace, name });
  }
  return out;
}
