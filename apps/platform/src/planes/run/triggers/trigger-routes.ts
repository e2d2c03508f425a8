/**
 * Paths of `http` and `http-async` triggers (reference control-plane.md §5.2: "an http trigger
 * `path = "agents/my-agent/sync"` is exposed at `https://run.blaxel.ai/{ws}/{path}`"): each
 * enabled trigger with a `configuration.path` mounts `{run_url}/{ws}{path}` onto its agent or
 * function. The path is an alias of the workload's root: `{ws}{path}/x?q` reaches the replica as
 * `/x?q` (`/` at least), like `{ws}/agents/{name}/x?q` does.
 *
 * Rules (ARCHITECTURE.md "Triggers"): a trigger path is looked up before the main URL (the most
 * specific mount wins: `/{ws}/agents/a/sync` on agent a is the trigger, not the sub-path `/sync`);
 * it may not claim another workload's URL space (`/agents/<other>…`, `/functions/<other>…`) nor
 * the other gateways' (`/models`, `/jobs`, `/applications`) — such a path is not mounted; when two
 * workloads of a workspace name the same path, the longer-established ordering (kind, then name)
 * decides, deterministically. The table is rebuilt from the records after every controller pass:
 * matching is a map lookup and a scan of the workspace's few paths, no store read.
 */
import type { RunAddress } from '../run-address.js';
import { RESERVED_WORKSPACE_NAMES } from '../../../framework/reserved-names.js';
import { RUN_SEGMENTS, type RunKind, type RunRecord, type RunTrigger } from '../run-ports.js';

interface Mount {
  /** Normalised: leading `/`, no trailing `/`, at least one segment. */
  path: string;
  kind: RunKind;
  name: string;
  trigger: RunTrigger;
}

/** First segments other gateways serve under `/{ws}/` (planes/model-gateway, jobs, applications). */
const OTHER_GATEWAYS = new Set(['models', 'jobs', 'applications', 'sandboxes']);

/** The mount point of a trigger path, or undefined when it may not be mounted (doc comment above). */
export function mountPath(kind: RunKind, name: string, path: string | undefined): string | undefined {
  if (!path) return undefined;
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.length === 0 || segments.includes('..')) return undefined;
  const [first, second] = segments;
  if (OTHER_GATEWAYS.has(first!)) return undefined;
  if (first === 'agents' || first === 'functions') {
    if (first !== RUN_SEGMENTS[kind] || second !== name) return undefined;
  }
  return `/${segments.join('/')}`;
}

export class TriggerRoutes {
  private byWorkspace = new Map<string, Mount[]>();

  /** Rebuilds the table from the records of a controller pass. */
  update(records: Iterable<RunRecord>): void {
    const next = new Map<string, Mount[]>();
    for (const r of records) {
      for (const trigger of r.triggers ?? []) {
        const path = mountPath(r.kind, r.name, trigger.path);
        if (!path) continue;
        let list = next.get(r.workspace);
        if (!list) next.set(r.workspace, (list = []));
        list.push({ path, kind: r.kind, name: r.name, trigger });
      }
    }
    // Longest path first; ties by kind then name, so the same records always give the same table.
    for (const list of next.values()) {
      list.sort(
        (a, b) =>
          b.path.length - a.path.length ||
          a.kind.localeCompare(b.kind) ||
          a.name.localeCompare(b.name) ||
          a.trigger.id.localeCompare(b.trigger.id),
      );
    }
    this.byWorkspace = next;
  }

  /** The workload a request URL reaches through a trigger path, if any. */
  match(url: string): RunAddress | undefined {
    if (this.byWorkspace.size === 0 || url[0] !== '/') return undefined;
    const slash = url.indexOf('/', 1);
    if (slash < 0) return undefined;
    const workspace = url.slice(1, slash);
    const mounts = this.byWorkspace.get(workspace);
    if (!mounts || RESERVED_WORKSPACE_NAMES.has(workspace)) return undefined;
    const q = url.indexOf('?', slash);
    const rest = q < 0 ? url.slice(slash) : url.slice(slash, q);
    const query = q < 0 ? '' : url.slice(q);
    for (const m of mounts) {
      if (rest !== m.path && !rest.startsWith(`${m.path}/`)) continue;
      const tail = rest.slice(m.path.length);
      return { kind: m.kind, workspace, name: m.name, path: `${tail || '/'}${query}`, trigger: m.trigger };
    }
    return undefined;
  }
}
