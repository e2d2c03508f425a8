/**
 * The model a request names, resolved once and cached (issue 18: no store read on the hot path):
 * the record, its connection's key and base URL, its policies and its adapter. The catalogue
 * hands the records in (compose.ts); a change notice of a model, connection or policy drops the
 * cached entries of that workspace at once, and an entry lives at most `ttlMs` (the bound across
 * platform processes, which the in-process ChangeFeed does not reach). An entry used after half its
 * life is read again in the background and replaced, so a model in steady use never waits for the
 * store on its request path (p99), and the bound stays `ttlMs` from the last read.
 */
import type { IntegrationConnectionSpec, ModelSpec, PolicySpec } from '@tarmac/contract';
import type { ChangeFeed } from '../../framework/change-feed.js';
import type { ResolvedModel } from './adapters/adapter.js';
import { PROVIDERS, pickKey } from './adapters/providers.js';
import { GatewayError } from './gateway-error.js';

export interface ModelRecord {
  uuid: string;
  accountId: string;
  spec: ModelSpec;
  connections: ReadonlyArray<{ name: string; spec: IntegrationConnectionSpec }>;
  policies: ReadonlyArray<{ name: string; spec: PolicySpec }>;
}

/** What the gateway needs of the catalogue (planes/catalogue/models/gateway-records.ts). */
export interface ModelCatalogue {
  kinds: readonly string[];
  get(workspace: string, name: string): Promise<ModelRecord | undefined>;
}

export class ModelResolver {
  private readonly cache = new Map<
    string,
    {
      at: number;
      value: Promise<ResolvedModel | undefined>;
      /** The value once settled (`peek` reads it without a promise). */
      settled?: { model: ResolvedModel | undefined };
      refreshing?: boolean;
    }
  >();
  private readonly off: Array<() => void> = [];

  constructor(
    private readonly catalogue: ModelCatalogue,
    changes: ChangeFeed | undefined,
    private readonly ttlMs = 5000,
    private readonly now: () => number = Date.now,
  ) {
    for (const kind of catalogue.kinds) {
      this.off.push(changes?.subscribe(kind, (ref) => this.forget(ref.workspace)) ?? (() => undefined));
    }
  }

  close(): void {
    for (const off of this.off.splice(0)) off();
  }

  /** Undefined when the workspace has no such model. */
  get(workspace: string, name: string): Promise<ResolvedModel | undefined> {
    const key = `${workspace}\u0000${name}`;
    const hit = this.fresh(key, workspace, name);
    if (hit) return hit.value;
    const value = this.read(workspace, name);
    if (this.cache.size >= 10_000) this.cache.clear();
    const entry: { at: number; value: typeof value; settled?: { model: ResolvedModel | undefined } } = {
      at: this.now(),
      value,
    };
    this.cache.set(key, entry);
    value.then(
      (model) => (entry.settled = { model }),
      () => this.cache.delete(key), // a failed read is not remembered
    );
    return value;
  }

  /** What `get` would resolve to when it is cached and settled (no promise: the hot path). */
  peek(workspace: string, name: string): { model: ResolvedModel | undefined } | undefined {
    return this.fresh(`${workspace}\u0000${name}`, workspace, name)?.settled;
  }

  private fresh(key: string, workspace: string, name: string) {
    const hit = this.cache.get(key);
    const now = this.now();
    if (!hit || now - hit.at >= this.ttlMs) return undefined;
    if (now - hit.at >= this.ttlMs / 2 && !hit.refreshing) this.refresh(key, workspace, name, hit);
    return hit;
  }

  private read(workspace: string, name: string): Promise<ResolvedModel | undefined> {
    return this.catalogue.get(workspace, name).then((r) => r && resolve(workspace, name, r));
  }

  /** Reads the entry again off the request path; replaces it unless a change notice dropped it meanwhile. */
  private refresh(key: string, workspace: string, name: string, hit: { refreshing?: boolean }): void {
    hit.refreshing = true;
    const at = this.now();
    const value = this.read(workspace, name);
    value.then(
      (model) => {
        if (this.cache.get(key) === hit) this.cache.set(key, { at, value, settled: { model } });
      },
      () => {
        hit.refreshing = false; // the old entry serves until it expires; the next use tries again
      },
    );
  }

  private forget(workspace: string): void {
    const prefix = `${workspace}\u0000`;
    for (const key of this.cache.keys()) if (!workspace || key.startsWith(prefix)) this.cache.delete(key);
  }
}

export function resolve(workspace: string, name: string, r: ModelRecord): ResolvedModel {
  const type = r.spec.runtime.type;
  const provider = PROVIDERS[type];
  if (!provider)
    throw new GatewayError(501, `model "${name}": provider type "${type}" is not served by this gateway`);
  const connection = r.connections[0]?.spec;
  const config = connection?.config ?? {};
  const base = config.baseUrl ?? provider.baseUrl;
  if (!base)
    throw new GatewayError(
      400,
      `model "${name}" (${type}) has no base URL: its integration connection must set config.baseUrl`,
    );
  let baseUrl: URL;
  try {
    baseUrl = new URL(base);
  } catch {
    baseUrl = new URL('invalid:');
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:')
    throw new GatewayError(400, `model "${name}": config.baseUrl must be an http(s) URL`);
  return {
    workspace,
    name,
    uuid: r.uuid,
    accountId: r.accountId,
    enabled: r.spec.enabled,
    provider: type,
    upstreamModel: r.spec.runtime.model || name,
    endpointName: r.spec.runtime.endpointName || undefined,
    organization: r.spec.runtime.organization || undefined,
    apiKey: connection ? pickKey(provider, connection.secret) : undefined,
    config,
    baseUrl,
    policies: r.policies,
    adapter: provider.adapter,
  };
}
