// `policyFor(ip, credentials)` of the egress proxy for real sandboxes: proxy credentials (record id
// and its egress password, proxy-auth.ts) → live sandbox, which must also be the one at the source
// address → its record's current `spec.network` (secrets opened) → compiled policy. Cached per record and
// dropped on every ChangeFeed notice for that sandbox, so `PUT /v0/sandboxes/{name}` with new
// network settings applies to the next request without a restart (brief, phase 2).
import type { ResourceRow } from '@tarmac/store';
import type { ChangeFeed, ResourceRef } from '../../../framework/change-feed.js';
import { readNetworkSettings } from '../records/network-settings.js';
import { compilePolicy, type EgressPolicy } from './policy.js';
import type { ProxyCredentials } from './proxy-auth.js';

/** The fields of a live sandbox the proxy needs (controllers/live-sandboxes.ts LiveSandbox). */
export interface LiveAddress {
  readonly id: string;
  readonly workspace: string;
  readonly name: string;
  readonly ip: string;
}

export interface SandboxPoliciesDeps {
  live: { all(): LiveAddress[] };
  resources: { getById(id: string): Promise<ResourceRow<unknown> | undefined> };
  /** `spec.network` of a record with its routing secrets opened (sandbox-secrets.ts 'reveal'). */
  revealNetwork: (row: ResourceRow<unknown>) => unknown;
  changes: ChangeFeed;
  sandboxKind: string;
  /** Whether `password` is the egress password of record `id` (gateway/sandbox-credentials.ts). */
  passwordMatches: (id: string, password: string) => boolean;
  /** Settles once the controllers re-attached surviving sandboxes after a platform start. */
  ready?: Promise<void>;
  /**
   * Asked when `live` has no entry for the credentials: a workload whose first request can come
   * before its runner registered it (a job task runs its command as soon as the container starts).
   */
  lookup?: (id: string) => Promise<LiveAddress | undefined>;
}

/** `system.egress.connected` of a sandbox record: false after DELETE /network/tunnel. */
export function egressConnected(system: Record<string, unknown>): boolean {
  const egress = system.egress as { connected?: unknown } | undefined;
  return egress?.connected !== false;
}

export class SandboxPolicies {
  private readonly cache = new Map<string, { ref: string; policy: EgressPolicy | undefined }>();
  private readonly unsubscribe: () => void;

  constructor(private readonly d: SandboxPoliciesDeps) {
    this.unsubscribe = d.changes.subscribe(d.sandboxKind, (ref) => this.forget(ref));
  }

  readonly policyFor = async (
    ip: string,
    credentials: ProxyCredentials | undefined,
  ): Promise<EgressPolicy | undefined> => {
    // Proof first: without the sandbox's own password nothing below runs (issue 19 item 3).
    if (!credentials || !this.d.passwordMatches(credentials.user, credentials.password)) return undefined;
    const find = () => this.d.live.all().find((e) => e.id === credentials.user);
    let entry = find();
    if (!entry && this.d.ready) {
      // Just started: the sandbox may be alive and not re-attached yet. Wait, then look again.
      await this.d.ready.catch(() => undefined);
      entry = find();
    }
    if (!entry && this.d.lookup) entry = await this.d.lookup(credentials.user).catch(() => undefined);
    // Defence in depth: the credentials are used from the sandbox's own address, nowhere else.
    if (!entry || entry.ip !== ip) return undefined;
    const hit = this.cache.get(entry.id);
    if (hit) return hit.policy;
    const row = await this.d.resources.getById(entry.id);
    const policy =
      row && !row.terminatedAt
        ? compilePolicy(
            `${row.workspace}/${row.name}`,
            readNetworkSettings(this.d.revealNetwork(row)).settings,
            {
              connected: egressConnected(row.system),
            },
          )
        : undefined;
    this.cache.set(entry.id, { ref: `${entry.workspace}\u0000${entry.name}`, policy });
    return policy;
  };

  /** Drops the cached policy of one record (the tunnel service after it changed the record). */
  invalidate(id: string): void {
    this.cache.delete(id);
  }

  close(): void {
    this.unsubscribe();
    this.cache.clear();
  }

  private forget(ref: ResourceRef): void {
    const key = `${ref.workspace}\u0000${ref.name}`;
    for (const [id, entry] of this.cache) if (entry.ref === key) this.cache.delete(id);
  }
}
