/**
 * The preview route table: every preview of every workspace, keyed by what its Host says
 * (preview-address.ts), in memory so the hot path is a map lookup. Preview writes publish a
 * ChangeFeed notice (resources/collection.ts); a notice marks the table stale and the next
 * lookup reloads it before answering, so a deleted or changed preview is never served from a stale
 * route (the task's "delete removes the route at once"). A reload is also forced every `maxAgeMs`
 * as a backstop for writes that bypass the feed (another process on the same PostgreSQL).
 */
import { lifecycleDurationSeconds, type PreviewSpec } from '@tarmac/contract';
import type { ResourceRow, Store } from '@tarmac/store';
import { CUSTOM_DOMAIN_KIND } from '../../../framework/kinds.js';
import { PREVIEW_KIND } from './previews.service.js';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import { customHostname, type PreviewAddress } from './preview-address.js';

export interface PreviewRoute {
  workspace: string;
  sandbox: string;
  name: string;
  port: number;
  public: boolean;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  /** Epoch ms after which the preview is over (spec `expires`, or `ttl` from its last write). */
  endsAtMs: number | undefined;
}

/** When a preview ends: the earlier of `spec.expires` and `spec.ttl` counted from its last write. */
export function previewEndsAt(spec: PreviewSpec, updatedAt: string): number | undefined {
  const ends: number[] = [];
  if (spec.expires) ends.push(Date.parse(spec.expires));
  const ttl = spec.ttl ? lifecycleDurationSeconds(spec.ttl) : undefined;
  if (ttl !== undefined) ends.push(Date.parse(updatedAt) + ttl * 1000);
  const valid = ends.filter((t) => Number.isFinite(t));
  return valid.length > 0 ? Math.min(...valid) : undefined;
}

export function toRoute(row: ResourceRow<PreviewSpec>): PreviewRoute {
  return {
    workspace: row.workspace,
    sandbox: row.parent,
    name: row.name,
    port: row.spec.port,
    public: row.spec.public ?? false,
    requestHeaders: row.spec.requestHeaders ?? {},
    responseHeaders: row.spec.responseHeaders ?? {},
    endsAtMs: previewEndsAt(row.spec, row.updatedAt),
  };
}

export class PreviewRoutes {
  private byId = new Map<string, PreviewRoute>();
  private byHost = new Map<string, PreviewRoute>();
  private loadedAt = -Infinity;
  /** Bumped by every notice; a load that started before a bump does not count as fresh. */
  private generation = 0;
  private loadedGeneration = -1;
  private loading: Promise<void> | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Pick<Store, 'resources'>,
    changes: ChangeFeed,
    private readonly now: () => number = Date.now,
    private readonly maxAgeMs = 30_000,
  ) {
    const stale = () => this.generation++;
    const stop = [changes.subscribe(PREVIEW_KIND, stale), changes.subscribe(CUSTOM_DOMAIN_KIND, stale)];
    this.unsubscribe = () => stop.forEach((f) => f());
  }

  /** The preview this address names, from a table no older than the last preview write. */
  async lookup(address: PreviewAddress): Promise<PreviewRoute | undefined> {
    await this.fresh();
    return address.kind === 'id' ? this.byId.get(address.previewId) : this.byHost.get(address.hostname);
  }

  close(): void {
    this.unsubscribe();
  }

  private async fresh(): Promise<void> {
    while (this.loadedGeneration !== this.generation || this.now() - this.loadedAt > this.maxAgeMs) {
      this.loading ??= this.load().finally(() => (this.loading = undefined));
      await this.loading;
    }
  }

  private async load(): Promise<void> {
    const generation = this.generation;
    const startedAt = this.now();
    const rows = await this.store.resources.listByKind<PreviewSpec>(PREVIEW_KIND); // oldest first
    const owners = await this.domainOwners();
    const byId = new Map<string, PreviewRoute>();
    const byHost = new Map<string, PreviewRoute>();
    for (const row of rows) {
      const route = toRoute(row);
      const previewId = typeof row.system.previewId === 'string' ? row.system.previewId : row.id;
      byId.set(previewId, route);
      const domain = row.spec.customDomain?.toLowerCase();
      if (!domain) continue;
      // A custom host is one workspace's: the workspaces that registered the domain (custom-domains
      // module) if any did, and among claimants the oldest preview — so another workspace cannot
      // take over a host by creating a preview with the same customDomain and prefixUrl later.
      const registered = owners.get(domain);
      if (registered && !registered.has(row.workspace)) continue;
      const host = customHostname(domain, row.spec.prefixUrl);
      if (!byHost.has(host)) byHost.set(host, route);
    }
    this.byId = byId;
    this.byHost = byHost;
    this.loadedAt = startedAt;
    this.loadedGeneration = generation;
  }

  /** Custom domain name → workspaces that registered it. */
  private async domainOwners(): Promise<Map<string, Set<string>>> {
    const owners = new Map<string, Set<string>>();
    for (const d of await this.store.resources.listByKind(CUSTOM_DOMAIN_KIND)) {
      const name = d.name.toLowerCase();
      let set = owners.get(name);
      if (!set) owners.set(name, (set = new Set()));
      set.add(d.workspace);
    }
    return owners;
  }
}
