/**
 * Which agent or function a request to the run URL names (spec "Inference endpoints"; reference
 * control-plane.md §5.2: `{run_url}/{ws}/{agents|functions}/{name}[/{subpath}]`, everything after
 * the name forwarded unchanged). The run plane shares the platform's listener, so this matches
 * the path only; reserved first segments (`v0`, `oauth`, …) are never a workspace.
 */
import { RESERVED_WORKSPACE_NAMES } from '../../framework/reserved-names.js';
import type { RunKind, RunTrigger } from './run-ports.js';

export interface RunAddress {
  kind: RunKind;
  workspace: string;
  name: string;
  /** What the replica gets: the rest of the path ('/' at least) and the query string. */
  path: string;
  /** Set when the request came in on a trigger's path (triggers/trigger-routes.ts). */
  trigger?: RunTrigger;
}

const RUN_PATH = /^\/([a-z0-9][a-z0-9-]*)\/(agents|functions)\/([a-z0-9][a-z0-9-]*)(\/[^?]*)?(\?.*)?$/;

export function runAddress(url: string): RunAddress | undefined {
  const m = RUN_PATH.exec(url);
  if (!m || RESERVED_WORKSPACE_NAMES.has(m[1]!)) return undefined;
  return {
    kind: m[2] === 'agents' ? 'agent' : 'function',
    workspace: m[1]!,
    name: m[3]!,
    path: `${m[4] ?? '/'}${m[5] ?? ''}`,
  };
}
