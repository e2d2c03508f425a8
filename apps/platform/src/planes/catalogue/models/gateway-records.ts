/**
 * What the model gateway (planes/model-gateway, issue 18) needs of a model record: its spec, the
 * integration connections it names with their secrets opened, and the policies it attaches. The
 * gateway declares the shape (`ModelCatalogue` there); compose.ts hands this implementation in.
 * Secrets are opened here, in the plane that sealed them, and only for the gateway's upstream call.
 */
import type { IntegrationConnectionSpec, ModelSpec, PolicySpec } from '@tarmac/contract';
import type { Store } from '@tarmac/store';
import { MODEL_KIND, CONNECTION_KIND, POLICY_KIND } from '../../../framework/kinds.js';
import { viewMap, type SecretBox } from '../../../framework/secrets.js';
import { secretContext } from '../workloads/workload-secrets.js';

export interface GatewayModelRecord {
  uuid: string;
  accountId: string;
  spec: ModelSpec;
  /** The connections `spec.integrationConnections` names, in order, secrets in clear. */
  connections: Array<{ name: string; spec: IntegrationConnectionSpec }>;
  policies: Array<{ name: string; spec: PolicySpec }>;
}

export function gatewayModelRecords(store: Store, secrets: SecretBox) {
  const accounts = new Map<string, string>();
  return {
    /** The kinds whose changes make a cached record stale (the gateway listens to them). */
    kinds: [MODEL_KIND, CONNECTION_KIND, POLICY_KIND] as const,
    async get(workspace: string, name: string): Promise<GatewayModelRecord | undefined> {
      const row = await store.resources.get<ModelSpec>(workspace, MODEL_KIND, name);
      if (!row || row.terminatedAt) return undefined;
      let accountId = accounts.get(workspace);
      if (!accountId) {
        accountId = (await store.workspaces.get(workspace))?.accountId ?? '';
        if (accountId) accounts.set(workspace, accountId);
      }
      const connections = [];
      for (const c of row.spec.integrationConnections ?? []) {
        const r = await store.resources.get<IntegrationConnectionSpec>(workspace, CONNECTION_KIND, c);
        if (!r) continue;
        const context = secretContext(workspace, CONNECTION_KIND, c);
        const secret = viewMap(secrets, r.spec.secret, context, 'reveal') ?? {};
        connections.push({ name: c, spec: { ...r.spec, secret } });
      }
      const policies = [];
      for (const p of row.spec.policies ?? []) {
        const r = await store.resources.get<PolicySpec>(workspace, POLICY_KIND, p);
        if (r) policies.push({ name: p, spec: r.spec });
      }
      return { uuid: row.id, accountId, spec: row.spec, connections, policies };
    },
  };
}
