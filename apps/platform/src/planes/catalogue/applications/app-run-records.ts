/**
 * Application records as the run plane reads them (issue 16 "Applications"; workloads/run-records.ts
 * lists them beside agents and functions). What a replica runs is the active revision
 * (`spec.revision.active`, else the newest of `spec.revisions`): its image, envs, memory and port.
 * Applications are always public (spec "Application": "Long-running deployment, always public"),
 * and are reached on their own host plus the hosts `spec.urls[]` claim (app-urls.ts).
 */
import type { AppRevision } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import { APPLICATION_KIND } from '../../../framework/kinds.js';
import { viewEnvs, type SecretBox } from '../../../framework/secrets.js';
import { secretContext } from '../workloads/workload-secrets.js';
import { claimedHostnames } from './app-urls.js';

export interface StoredApplication {
  enabled?: boolean;
  image?: string;
  port?: number;
  memory?: number;
  revision?: { active?: string };
  revisions?: AppRevision[];
  urls?: Array<{ domain?: string; subdomain?: string }>;
}

/** The revision replicas run: the active one, else the newest; undefined before any image. */
export function activeRevision(spec: StoredApplication): AppRevision | undefined {
  const all = spec.revisions ?? [];
  return all.find((r) => r.id === spec.revision?.active) ?? all[0];
}

/** The revision id the run plane keys replica sets by. */
export function applicationRevisionOf(row: ResourceRow<StoredApplication>): string {
  const active = activeRevision(row.spec);
  return active ? active.id : `r${row.revision}`;
}

export function applicationRunView(row: ResourceRow<StoredApplication>, platformDomain: string) {
  const active = activeRevision(row.spec);
  return {
    id: row.id,
    kind: APPLICATION_KIND as typeof APPLICATION_KIND,
    workspace: row.workspace,
    name: row.name,
    status: row.status ?? 'DEPLOYING',
    enabled: row.spec.enabled !== false,
    public: true,
    image: active?.image ?? (row.spec.image || undefined),
    memoryMB: active?.memory ?? row.spec.memory ?? 2048,
    port: active?.port ?? row.spec.port ?? 8080,
    hosts: claimedHostnames(row.spec.urls, platformDomain),
    // Long-running, one replica while enabled (spec "Application"; issue 16: "at least one replica
    // while enabled"): never frozen nor stopped for idleness (planes/run/idle-policy.ts), never
    // scaled out — the spec has no scale bounds, and an application may keep state in its process
    // without thread headers to route by (planes/run/autoscaler.ts).
    minScale: 1,
    maxScale: 1,
    revision: applicationRevisionOf(row),
    lastMessage: row.events.at(-1)?.message,
    triggers: [], // applications have no triggers (spec "Application")
  };
}

/** The active revision's envs, secrets opened (only into the env of a replica being created). */
export function applicationEnv(box: SecretBox, row: ResourceRow<StoredApplication>): Record<string, string> {
  const envs = activeRevision(row.spec)?.envs ?? [];
  const context = secretContext(row.workspace, APPLICATION_KIND, row.name);
  const env: Record<string, string> = {};
  for (const e of viewEnvs(box, envs, context, 'reveal') ?? []) env[e.name] = e.value;
  return env;
}
