/**
 * The agent and function records as the run plane reads and writes them (issue 16; compose.ts
 * hands this in as its `RunCatalogue`, planes/run/run-ports.ts). Secrets are opened here, in the
 * plane that sealed them, and only for the env of a replica being created: `runtime.envs`, then
 * each integration connection's `config` and `secret` keys under their own names (functions,
 * issue 16 "integrationConnections are decrypted and handed to it as environment variables").
 * Status writes are read-modify-write at the record's revision (framework/collection.ts mutate),
 * skipped when the record moved to another revision or already has the status.
 */
import type { IntegrationConnectionSpec } from '@tarmac/contract';
import type { ResourceRow, Store } from '@tarmac/store';
import { ResourceCollection, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { AGENT_KIND, APPLICATION_KIND, CONNECTION_KIND, FUNCTION_KIND } from '../../../framework/kinds.js';
import { SecretBox, viewMap, type SecretEnv } from '../../../framework/secrets.js';
import {
  applicationEnv,
  applicationRevisionOf,
  applicationRunView,
  type StoredApplication,
} from '../applications/app-run-records.js';
import { secretContext, viewSpec, type SecretBearingSpec } from './workload-secrets.js';
import { runTriggersOf, type RunTriggerView } from './run-triggers.js';

type Kind = 'agent' | 'function' | 'application';
interface StoredSpec extends SecretBearingSpec {
  enabled?: boolean;
  public?: boolean;
  integrationConnections?: string[];
  runtime?: { image?: string; memory?: number; envs?: SecretEnv[]; minScale?: number; maxScale?: number };
}

export interface RunRecordView {
  id: string;
  kind: Kind;
  workspace: string;
  name: string;
  status: string;
  enabled: boolean;
  public: boolean;
  image: string | undefined;
  memoryMB: number;
  /** The port the workload listens on (PORT): 8080, or an application's `port`. */
  port: number;
  /** Hosts an application's `spec.urls[]` claim (none for agents and functions). */
  hosts: string[];
  minScale: number;
  maxScale: number;
  revision: string;
  lastMessage: string | undefined;
  triggers: RunTriggerView[];
}

const LABELS: Record<Kind, string> = { agent: 'Agent', function: 'Function', application: 'Application' };

/** The newest revision id the catalogue wrote (workload.service.ts, build-records.ts). */
export function revisionOf(row: ResourceRow<unknown>): string {
  const revisions = row.system.revisions as Array<{ id?: string }> | undefined;
  return revisions?.[0]?.id ?? `r${row.revision}`;
}

export function runRecords(deps: CollectionDeps & { secrets: SecretBox }) {
  const store: Store = deps.store;
  const view = (row: ResourceRow<StoredSpec>, kind: Kind): RunRecordView => ({
    id: row.id,
    kind,
    workspace: row.workspace,
    name: row.name,
    status: row.status ?? 'DEPLOYING',
    enabled: row.spec.enabled !== false,
    public: row.spec.public === true,
    image: row.spec.runtime?.image || undefined,
    memoryMB: row.spec.runtime?.memory ?? 2048,
    port: 8080,
    hosts: [],
    // The contract's defaults (packages/contract workload-common.ts scaledRuntimeShape); reference
    // control-plane.md: "minScale (0 means scale to zero)".
    minScale: Math.max(0, Math.floor(row.spec.runtime?.minScale ?? 0)),
    maxScale: row.spec.runtime?.maxScale ?? 10,
    revision: revisionOf(row),
    lastMessage: row.events.at(-1)?.message,
    triggers: runTriggersOf(row.spec.triggers),
  });
  return {
    kinds: [AGENT_KIND, FUNCTION_KIND, APPLICATION_KIND] as const,
    async list(): Promise<RunRecordView[]> {
      const out: RunRecordView[] = [];
      for (const kind of [AGENT_KIND, FUNCTION_KIND] as const) {
        for (const row of await store.resources.listByKind<StoredSpec>(kind)) {
          if (!row.terminatedAt && row.status !== 'DELETING') out.push(view(row, kind));
        }
      }
      for (const row of await store.resources.listByKind<StoredApplication>(APPLICATION_KIND)) {
        if (!row.terminatedAt && row.status !== 'DELETING')
          out.push(applicationRunView(row, deps.hosts.domain));
      }
      return out;
    },
    async envOf(r: RunRecordView): Promise<Record<string, string>> {
      if (r.kind === APPLICATION_KIND) {
        const row = await store.resources.get<StoredApplication>(r.workspace, r.kind, r.name);
        return row ? applicationEnv(deps.secrets, row) : {};
      }
      const row = await store.resources.get<StoredSpec>(r.workspace, r.kind, r.name);
      if (!row) return {};
      const env: Record<string, string> = {};
      if (r.kind === FUNCTION_KIND) {
        for (const c of row.spec.integrationConnections ?? []) {
          const conn = await store.resources.get<IntegrationConnectionSpec>(r.workspace, CONNECTION_KIND, c);
          if (!conn) continue;
          const context = secretContext(r.workspace, CONNECTION_KIND, c);
          Object.assign(
            env,
            conn.spec.config ?? {},
            viewMap(deps.secrets, conn.spec.secret, context, 'reveal'),
          );
        }
      }
      const spec = viewSpec(deps.secrets, row.spec, secretContext(r.workspace, r.kind, r.name), 'reveal');
      for (const e of spec.runtime?.envs ?? []) env[e.name] = e.value;
      return env;
    },
    async callbackSecret(r: RunRecordView, triggerId: string): Promise<string | undefined> {
      const row = await store.resources.get<StoredSpec>(r.workspace, r.kind, r.name);
      const sealed = row?.spec.triggers?.find((t) => t.id === triggerId)?.configuration.callbackSecret;
      if (!row || row.id !== r.id || sealed === undefined) return undefined;
      return SecretBox.isSealed(sealed)
        ? deps.secrets.open(sealed, secretContext(r.workspace, r.kind, r.name))
        : sealed;
    },
    async setStatus(r: RunRecordView, status: string, message: string): Promise<boolean> {
      const rows = new ResourceCollection<StoredSpec & StoredApplication>(deps, r.kind, LABELS[r.kind]);
      const revisionNow = r.kind === APPLICATION_KIND ? applicationRevisionOf : revisionOf;
      let wrote = false;
      try {
        await rows.mutate(r.workspace, r.name, 'run-plane', async (row) => {
          if (row.id !== r.id || revisionNow(row) !== r.revision || row.status === status) return undefined;
          if ((row.spec.enabled !== false) !== r.enabled) return undefined; // changed meanwhile
          wrote = true;
          return { patch: { status }, event: newEvent(row, 'deployment', status, message, deps.now()) };
        });
      } catch {
        return false; // gone (404) or contended: the next pass looks again
      }
      return wrote;
    },
    /** An event at the record's current status (STANDBY, stopped for idleness): status unchanged. */
    async note(r: RunRecordView, message: string): Promise<void> {
      const rows = new ResourceCollection<StoredSpec & StoredApplication>(deps, r.kind, LABELS[r.kind]);
      const revisionNow = r.kind === APPLICATION_KIND ? applicationRevisionOf : revisionOf;
      try {
        await rows.mutate(r.workspace, r.name, 'run-plane', async (row) => {
          if (row.id !== r.id || revisionNow(row) !== r.revision) return undefined;
          const status = row.status ?? 'DEPLOYED';
          return { patch: {}, event: newEvent(row, 'deployment', status, message, deps.now()) };
        });
      } catch {
        // gone (404) or contended: an informational event is not retried
      }
    },
  };
}
