import type { BillingDimension } from '@tarmac/contract';
import type { Repositories, ResourceEvent, ResourceRow } from '@tarmac/store';
import type { MeteredResource, Observation, Rate, RateChange, UsageSource } from './source.js';

/** 1 GB = 1024 MB, the unit `spec.runtime.memory` and `spec.size` are given in. */
const MB_PER_GB = 1024;
const BYTES_PER_GB = 1024 ** 3;

export type AccountOf = (workspace: string) => Promise<string | undefined>;
type Store = Pick<Repositories, 'resources'>;

interface SandboxSpec {
  runtime?: { memory?: number; image?: string };
}
interface VolumeSpec {
  size?: number;
}

const toMs = (iso: string | null | undefined) => (iso ? Date.parse(iso) : undefined);

/** Live rows of a kind plus the tracked ones that are no longer live (ended or deleted). */
async function rowsOf<S>(store: Store, kind: string, known: ReadonlySet<string>): Promise<ResourceRow<S>[]> {
  const live = await store.resources.listByKind<S>(kind);
  const seen = new Set(live.map((r) => r.id));
  const gone = await Promise.all(
    [...known].filter((id) => !seen.has(id)).map((id) => store.resources.getById<S>(id)),
  );
  return [...live, ...gone.filter((r): r is ResourceRow<S> => r !== undefined && r.kind === kind)];
}

async function identity(row: ResourceRow, resourceType: string, accountOf: AccountOf) {
  const accountId = await accountOf(row.workspace);
  if (!accountId) return undefined;
  const resource: MeteredResource = {
    accountId,
    workspace: row.workspace,
    resourceType,
    resourceName: row.name,
    resourceUuid: row.id,
  };
  return resource;
}

/**
 * What a sandbox event says about its container from the event's time on (the sandbox controller's
 * vocabulary, controllers/sandbox-controller.ts and standby.ts): `Deployment` (DEPLOYED) and
 * `Resume` mean RUNNING, `Standby` means frozen, `Failure` and `Deletion` mean no container.
 * Events named after the state itself (`RUNNING`, `STANDBY`) are understood too.
 */
type SandboxPhase = 'RUNNING' | 'STANDBY' | 'STOPPED';
export function sandboxPhaseOf(event: Pick<ResourceEvent, 'type' | 'status'>): SandboxPhase | undefined {
  switch (event.type.toLowerCase()) {
    case 'deployment':
      return event.status === 'DEPLOYED' ? 'RUNNING' : undefined;
    case 'resume':
    case 'running':
      return 'RUNNING';
    case 'standby':
      return 'STANDBY';
    case 'failure':
    case 'deletion':
      return 'STOPPED';
    default:
      return undefined;
  }
}

/** Statuses without a container: nothing is consumed. */
const STOPPED_STATUSES = new Set(['FAILED', 'TERMINATED']);

/**
 * Sandboxes (spec "Billing entities"): RUNNING memory → sandbox_compute_runtime_gbs; STANDBY frozen
 * memory → sandbox_snapshot_storage_gbs; the image's bytes → sandbox_image_storage_gbs for as long
 * as its container exists (size from `system.imageSizeBytes`, when the controller recorded it).
 */
export function sandboxSource(store: Store, accountOf: AccountOf): UsageSource {
  const ratesFor = (row: ResourceRow<SandboxSpec>, state: string | null): Rate[] => {
    const rates: Rate[] = [];
    if (state !== 'RUNNING' && state !== 'STANDBY') return rates;
    const memoryGb = (row.spec.runtime?.memory ?? 0) / MB_PER_GB;
    if (state === 'RUNNING' && memoryGb > 0)
      rates.push({ dimension: 'sandbox_compute_runtime_gbs', perSecond: memoryGb });
    if (state === 'STANDBY' && memoryGb > 0)
      rates.push({ dimension: 'sandbox_snapshot_storage_gbs', perSecond: memoryGb });
    const imageBytes = row.system.imageSizeBytes;
    if (typeof imageBytes === 'number' && imageBytes > 0) {
      rates.push({ dimension: 'sandbox_image_storage_gbs', perSecond: imageBytes / BYTES_PER_GB });
    }
    return rates;
  };
  return {
    kind: 'sandbox',
    async observe(known) {
      const out: Observation[] = [];
      for (const row of await rowsOf<SandboxSpec>(store, 'sandbox', known)) {
        const resource = await identity(row, 'sandbox', accountOf);
        if (!resource) continue;
        const changes: RateChange[] = [];
        for (const event of row.events) {
          const state = sandboxPhaseOf(event);
          const at = toMs(event.time);
          if (state && at !== undefined && !Number.isNaN(at))
            changes.push({ at, rates: ratesFor(row, state) });
        }
        changes.sort((a, b) => a.at - b.at);
        const endedAt = toMs(row.terminatedAt);
        out.push({
          resource,
          rates:
            endedAt === undefined && !STOPPED_STATUSES.has(row.status ?? '') ? ratesFor(row, row.state) : [],
          changes,
          ...(endedAt !== undefined ? { endedAt } : {}),
        });
      }
      return out;
    },
  };
}

/** Volumes: `spec.size` MB held from creation until terminatedAt → volume_storage_gbs. */
export function volumeSource(store: Store, accountOf: AccountOf): UsageSource {
  const dimension: BillingDimension = 'volume_storage_gbs';
  return {
    kind: 'volume',
    async observe(known) {
      const out: Observation[] = [];
      for (const row of await rowsOf<VolumeSpec>(store, 'volume', known)) {
        const resource = await identity(row, 'volume', accountOf);
        if (!resource) continue;
        const sizeGb = (row.spec.size ?? 0) / MB_PER_GB;
        const rates = sizeGb > 0 ? [{ dimension, perSecond: sizeGb }] : [];
        const created = Date.parse(row.createdAt);
        const endedAt = toMs(row.terminatedAt);
        out.push({
          resource,
          rates: endedAt === undefined ? rates : [],
          changes: Number.isNaN(created) ? [] : [{ at: created, rates }],
          ...(endedAt !== undefined ? { endedAt } : {}),
        });
      }
      return out;
    },
  };
}
