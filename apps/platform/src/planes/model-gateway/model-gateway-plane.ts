/**
 * Builds the model gateway plane (issue 18) from what compose.ts hands in: the catalogue's model
 * records, the shared authenticator and workspace resolver, the change feed, and the metering
 * plane's usage sink. Returns the raw route the listener dispatches to and the closer.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import type { Authenticator, WorkspaceResolver } from '@tarmac/server-kit';
import { AccessCache, ACCESS_CACHE_TTL_MS, ACCESS_REFRESH_WINDOW_MS } from '../../framework/access-cache.js';
import type { ChangeFeed } from '../../framework/change-feed.js';
import { DestinationGuard, type Lookup } from '../../framework/destinations/destination-guard.js';
import { HostAddresses } from '../../framework/destinations/host-addresses.js';
import { NON_PUBLIC_CIDRS } from '../../framework/destinations/public-destinations.js';
import { PROVIDERS } from './adapters/providers.js';
import type { ModelAddress } from './model-address.js';
import { ModelGateway } from './model-gateway.js';
import { ModelResolver, type ModelCatalogue } from './model-resolver.js';
import { TokenBudgets, type UsageHistory } from './token-budget.js';
import { Upstream } from './upstream.js';
import { UsageRecorder, type ModelCall, type UsageSink } from './usage-recorder.js';

/** Not public (issue 18: "public addresses only by default"): framework/destinations. */
export { NON_PUBLIC_CIDRS };

/** The `runtime.type`s this gateway serves (the catalogue marks such model records DEPLOYED). */
export const SERVED_PROVIDER_TYPES: ReadonlySet<string> = new Set(Object.keys(PROVIDERS));

export interface ModelGatewayPlaneDeps {
  catalogue: ModelCatalogue;
  changes: ChangeFeed;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  usageSink: UsageSink;
  /** Tokens already recorded in a budget period (restart-safe maxToken policies). */
  usageHistory?: UsageHistory;
  upstream: { allowCidrs: readonly string[]; timeoutMs: number; retries: number; maxRetryDelayMs: number };
  /** The platform's own port: never an upstream, whatever the allow-list says. */
  selfPort: () => number | undefined;
  onUsageError?: (err: unknown) => void;
  /** Told of every batch of call records (latency, status, caller) before it is written: the log. */
  onCalls?: (calls: readonly ModelCall[]) => void;
  /** Name resolution (tests pin names); dns.lookup by default. */
  resolve?: Lookup;
}

export interface ModelGatewayPlane {
  gateway: ModelGateway;
  route: {
    matches(req: IncomingMessage): boolean;
    listener: (req: IncomingMessage, res: ServerResponse) => void;
  };
  close(): Promise<void>;
}

export function createModelGatewayPlane(d: ModelGatewayPlaneDeps): ModelGatewayPlane {
  const hostAddresses = new HostAddresses({
    interfaces: networkInterfaces,
    isBridge: (name) => /^[\w.:-]+$/.test(name) && existsSync(`/sys/class/net/${name}/bridge`),
  });
  const guardOptions = { blockedCidrs: NON_PUBLIC_CIDRS, hostAddresses };
  const upstream = new Upstream({
    guard: new DestinationGuard({ ...guardOptions, allowCidrs: d.upstream.allowCidrs }),
    strictGuard: new DestinationGuard(guardOptions),
    selfPort: d.selfPort,
    retries: d.upstream.retries,
    maxRetryDelayMs: d.upstream.maxRetryDelayMs,
    timeoutMs: d.upstream.timeoutMs,
    ...(d.resolve ? { resolve: d.resolve } : {}),
  });
  // Entries in use are re-validated in the background (as the sandbox gateway's, issue 20 item 2):
  // the once-a-second store read of an expired entry stays off the request path (p99).
  const access = new AccessCache(
    d.authenticator,
    d.workspaces,
    Date.now,
    ACCESS_CACHE_TTL_MS,
    10_000,
    d.changes,
    {
      windowMs: ACCESS_REFRESH_WINDOW_MS,
      maxRefreshed: 1024,
    },
  );
  access.startRefresh();
  const models = new ModelResolver(d.catalogue, d.changes);
  const sink: UsageSink = {
    record: (calls) => {
      d.onCalls?.(calls);
      return d.usageSink.record(calls);
    },
  };
  const usage = new UsageRecorder(sink, d.onUsageError ? { onError: d.onUsageError } : {});
  const gateway = new ModelGateway({
    access,
    models,
    upstream,
    budgets: new TokenBudgets(Date.now, d.usageHistory),
    usage,
  });
  // The listener asks `matches` and then calls `listener` with the same request: the address is
  // read once (one slot, by request identity; only model traffic is kept, until its listener runs).
  let matched: { req: IncomingMessage; addr: ModelAddress } | undefined;
  const match = (req: IncomingMessage) => {
    if (matched?.req === req) return matched.addr;
    const addr = gateway.match(req);
    if (addr) matched = { req, addr };
    return addr;
  };
  return {
    gateway,
    route: {
      matches: (req) => match(req) !== undefined,
      listener: (req, res) => {
        const addr = match(req);
        matched = undefined;
        if (addr) void gateway.handle(req, res, addr);
      },
    },
    async close() {
      await usage.close();
      models.close();
      access.close();
      upstream.close();
    },
  };
}
