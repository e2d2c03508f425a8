/**
 * Agents and functions (MCP servers) as a usage source (issue 16 "Metering"; spec "Billing
 * entities"): the run plane reports each record's replica totals and their changes over time
 * (planes/run/usage/replica-usage.ts, handed in by compose.ts as a `ReplicaUsagePort`):
 *   - RUNNING replicas' memory GB → `agent_compute_runtime_gbs` / `mcp_server_compute_runtime_gbs`;
 *   - STANDBY (frozen) replicas' memory GB → `sandbox_snapshot_storage_gbs`, where a sandbox's
 *     STANDBY goes (the issue: "STANDBY billed like sandbox snapshots"; the contract has no
 *     agent snapshot dimension), under the agent's or MCP server's own resource identity;
 *   - the bytes of the images its replicas run → `agent_image_storage_gbs` /
 *     `mcp_server_image_storage_gbs`, for as long as a replica (running or frozen) exists;
 * and each accepted async request → one `agent_async_requests_count` (`asyncCounter`).
 * Applications' replicas are not billed: the spec's metrics table has no application dimension.
 */
import type { BillingDimension } from '@tarmac/contract';
import type { AccountOf } from './resource-sources.js';
import type { Meter } from './meter.js';
import type { MeteredResource, Observation, Rate, UsageSource } from './source.js';

const MB_PER_GB = 1024;
const BYTES_PER_GB = 1024 ** 3;

type RunKind = 'agent' | 'function' | 'application';
type BilledKind = Exclude<RunKind, 'application'>;
interface Levels {
  runningMB: number;
  standbyMB: number;
  imageBytes: number;
}

/** What the run plane's ReplicaUsage offers (structural: the planes do not import each other). */
export interface ReplicaUsagePort {
  snapshot(now: number): Array<{
    recordId: string;
    kind: RunKind;
    workspace: string;
    name: string;
    current: Levels;
    changes: Array<Levels & { at: number }>;
  }>;
  onAsync(
    listener: (c: {
      recordId: string;
      kind: RunKind;
      workspace: string;
      name: string;
      requestId: string;
      at: number;
    }) => void,
  ): void;
}

const DIMENSIONS: Record<BilledKind, { type: string; compute: BillingDimension; image: BillingDimension }> = {
  agent: { type: 'agent', compute: 'agent_compute_runtime_gbs', image: 'agent_image_storage_gbs' },
  function: {
    type: 'mcp_server',
    compute: 'mcp_server_compute_runtime_gbs',
    image: 'mcp_server_image_storage_gbs',
  },
};

export function ratesOf(kind: BilledKind, l: Levels): Rate[] {
  const d = DIMENSIONS[kind];
  const rates: Rate[] = [];
  if (l.runningMB > 0) rates.push({ dimension: d.compute, perSecond: l.runningMB / MB_PER_GB });
  if (l.standbyMB > 0)
    rates.push({ dimension: 'sandbox_snapshot_storage_gbs', perSecond: l.standbyMB / MB_PER_GB });
  if (l.imageBytes > 0) rates.push({ dimension: d.image, perSecond: l.imageBytes / BYTES_PER_GB });
  return rates;
}

export function replicaSource(
  usage: ReplicaUsagePort,
  accountOf: AccountOf,
  now: () => number = Date.now,
): UsageSource {
  return {
    kind: 'run-replicas',
    async observe() {
      const out: Observation[] = [];
      for (const r of usage.snapshot(now())) {
        // The spec's billing table ("Billing entities") names no application dimension: not billed.
        const kind = r.kind;
        if (kind === 'application') continue;
        const accountId = await accountOf(r.workspace);
        if (!accountId) continue;
        out.push({
          resource: resourceOf(accountId, { ...r, kind }),
          rates: ratesOf(kind, r.current),
          changes: r.changes.map((c) => ({ at: c.at, rates: ratesOf(kind, c) })),
        });
      }
      return out;
    },
  };
}

/** Wires the run plane's async-request counts into the meter: one idempotent sample each. */
export function countAsyncRequests(
  usage: ReplicaUsagePort,
  meter: Pick<Meter, 'recordCount'>,
  accountOf: AccountOf,
  onError: (err: unknown) => void,
): void {
  usage.onAsync((c) => {
    const kind = c.kind;
    if (kind === 'application') return; // applications take no async requests
    void accountOf(c.workspace)
      .then((accountId) =>
        accountId
          ? meter.recordCount(
              resourceOf(accountId, { ...c, kind }),
              'agent_async_requests_count',
              1,
              c.at,
              c.requestId,
            )
          : false,
      )
      .catch(onError);
  });
}

function resourceOf(
  accountId: string,
  r: { recordId: string; kind: BilledKind; workspace: string; name: string },
): MeteredResource {
  return {
    accountId,
    workspace: r.workspace,
    resourceType: DIMENSIONS[r.kind].type,
    resourceName: r.name,
    resourceUuid: r.recordId,
  };
}
