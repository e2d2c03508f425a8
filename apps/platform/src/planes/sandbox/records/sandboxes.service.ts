import { type Sandbox, type SandboxCreate, type SandboxSpec, type SandboxUpdate } from '@tarmac/contract';
import {
  ApiError,
  conflict,
  forbidden,
  invalidField,
  type PageRequest,
  type WorkspaceAccess,
} from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import {
  ResourceCollection,
  listFilter,
  mapPage,
  type CollectionDeps,
} from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { sandboxUrl } from '../../../framework/hosts.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import type { SecretView } from '../../../framework/secrets.js';
import type { VolumesService } from '../volumes/volumes.service.js';
import { validateNetworkSpec } from './validate.js';
import { sandboxExpiresIn } from './sandbox-expiry.js';
import { sandboxSecretContext, sealSandboxSpec, viewSandboxSpec } from './sandbox-secrets.js';
import { SANDBOX_KIND } from '../../../framework/kinds.js';
import type { SandboxPool } from '../pool/sandbox-pool.js';
import type { ClaimedSandbox } from '../pool/warm-pool.js';
import { DEFAULT_MEMORY_MB } from './sandbox-record.js';
export { SANDBOX_KIND } from '../../../framework/kinds.js';

/**
 * `spec.network` must be applicable as written (egress/validate.ts): an unsupported feature is a
 * 400 naming the field, never silently ignored.
 */
function checkNetwork(spec: SandboxSpec): void {
  checkApplicable(spec);
  const issues = validateNetworkSpec(spec.network);
  const first = issues[0];
  if (!first) return;
  const field = (path: string) => path.replace(/\[(\d+)\]/g, '.$1');
  throw new ApiError('validation_error', `${field(first.path)}: ${first.message}`, {
    details: issues.map((i) => ({ field: field(i.path), message: i.message })),
  });
}

/**
 * Fields this platform cannot apply are a 400 naming them, never stored and ignored (issue 14
 * item 8): there is one network (no VPCs), and sandboxes get no extra kernel capabilities, so the
 * extraArgs flags can only be `disabled` (what every sandbox already is).
 */
function checkApplicable(spec: SandboxSpec): void {
  if (spec.vpc !== undefined && spec.vpc !== 'default') {
    throw invalidField(
      'spec.vpc',
      'must be "default": this platform has no VPCs (egress is set with spec.network)',
    );
  }
  for (const [flag, value] of Object.entries(spec.runtime?.extraArgs ?? {})) {
    if (value === 'enabled') {
      throw invalidField(
        `spec.runtime.extraArgs.${flag}`,
        'enabled is not available on this platform: sandboxes run without the capabilities it needs',
      );
    }
  }
}

/** Kind string of sandbox records in the resources table (contract with the controller: README.md). */
/** Statuses in which a sandbox no longer counts as existing for createIfNotExist (spec "States"). */
const GONE = new Set(['FAILED', 'TERMINATED', 'TERMINATING', 'DELETING']);

export interface SandboxServiceDeps extends CollectionDeps {
  volumes: VolumesService;
  /** Whether the workspace can run an image reference (the engine's image store; default: accept). */
  validateImage?: (ref: string, workspace: string) => Promise<boolean>;
  /**
   * Most memory (MB) one sandbox can have on this host: what the engine commits to sandboxes in
   * total (host memory x overcommit, LocalEngine.memoryCapacityMB). Unbounded when absent.
   */
  maxMemoryMB?: number;
  /** The warm pool (issue 20): a create it can serve gets a pre-booted sandbox, DEPLOYED at once. */
  pool?: SandboxPool;
  /**
   * Listens for the sandbox controller's next word about one sandbox (gateway/start-waiters.ts):
   * a create of a name whose previous sandbox is still being torn down waits for it with this
   * (issue 14 item 2). Without it such a create is a 409 until the teardown ends.
   */
  watchSandbox?: (workspace: string, name: string) => SandboxWatch;
  /** Runs when a sandbox's deletion is requested (its previews and their tokens go with it). */
  onDelete?: (workspace: string, name: string) => Promise<void>;
}

/** One listener for notices about a sandbox (gateway/start-waiters.ts StartWaiter). */
export interface SandboxWatch {
  next(ms: number): Promise<void>;
  cancel(): void;
}

/**
 * `state` of a sandbox that has or is about to have a container (issue 14 items 2 and 8): a
 * DEPLOYED one's as the controllers keep it; a DEPLOYING one is RUNNING once up, and requests to it
 * are held until then (gateway/start-waiters.ts), so the create response says RUNNING; an ended or
 * failed one has none (a TERMINATED record showed `state: RUNNING`).
 */
function stateOf(row: ResourceRow<SandboxSpec>): Pick<Sandbox, 'state'> {
  const stored = row.state === 'RUNNING' || row.state === 'STANDBY' ? row.state : undefined;
  if (row.status === 'DEPLOYED') return stored ? { state: stored } : {};
  if (row.status === 'DEPLOYING') return { state: stored ?? 'RUNNING' };
  return {};
}

/**
 * The spec with every `null` field removed: null means "clear it" (issue 14 item 5: the vendor
 * SDK's updateTtl(null) and updateLifecycle(null)), and a cleared field is an absent one.
 */
function withoutNulls(spec: SandboxSpec): SandboxSpec {
  const drop = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)) as T;
  const out = drop(spec);
  return out.runtime ? { ...out, runtime: drop(out.runtime) } : out;
}

/** Longest a create waits for the previous sandbox of its name to finish deleting. */
const REUSE_WAIT_MS = 60_000;

interface ListQuery {
  status?: string[] | undefined;
  showTerminated?: boolean | undefined;
  externalId?: string | undefined;
}

/**
 * The sandbox API service: validates and writes the desired spec, appends an event and publishes
 * a change notice; the sandbox controller (issue 4) makes it run and writes status/state back.
 */
export class SandboxesService {
  readonly col: ResourceCollection<SandboxSpec>;

  constructor(private readonly deps: SandboxServiceDeps) {
    this.col = new ResourceCollection<SandboxSpec>(deps, SANDBOX_KIND, 'Sandbox');
  }

  view(row: ResourceRow<SandboxSpec>, secrets: SecretView = 'mask'): Sandbox {
    const expiresIn = sandboxExpiresIn(row, this.deps.now());
    // Never used yet: its creation is its last use (the create response carries it: spec
    // "sandbox with events, expiresIn, lastUsedAt, state, status"; issue 14 item 8).
    const lastUsedAt = row.system.lastUsedAt ?? row.createdAt;
    return {
      metadata: envelopeMetadata(row, sandboxUrl(this.deps.hosts, row.workspace, row.name, row.spec.region)),
      spec: viewSandboxSpec(
        this.deps.secrets,
        row.spec,
        sandboxSecretContext(row.workspace, row.name),
        secrets,
      ),
      events: eventsOf(row),
      status: (row.status ?? 'DEPLOYING') as Sandbox['status'],
      ...stateOf(row),
      ...(expiresIn !== undefined ? { expiresIn } : {}),
      ...(typeof lastUsedAt === 'string' ? { lastUsedAt } : {}),
      ...(row.terminatedAt ? { terminatedAt: row.terminatedAt } : {}),
    };
  }

  async list(ws: WorkspaceAccess, page: PageRequest, query: ListQuery) {
    return mapPage(await this.col.list(ws.name, page, listFilter(query)), (r) => this.view(r));
  }

  /** `show_secrets=true` reveals secret values to workspace admins only (spec "Authentication" 4). */
  async get(ws: WorkspaceAccess, name: string, showSecrets = false): Promise<Sandbox> {
    if (showSecrets && ws.role !== 'admin') {
      throw forbidden('show_secrets=true requires the workspace admin role');
    }
    return this.view(await this.col.get(ws.name, name), showSecrets ? 'reveal' : 'mask');
  }

  async getByExternalId(ws: WorkspaceAccess, externalId: string): Promise<Sandbox> {
    return this.view(await this.col.getByExternalId(ws.name, externalId));
  }

  async create(
    ws: WorkspaceAccess,
    actor: string,
    body: SandboxCreate,
    createIfNotExist = false,
    /** System fields the new record starts with (a fork's `seedSnapshot`, snapshots.service.ts). */
    system?: Record<string, unknown>,
  ): Promise<Sandbox> {
    const name = body.metadata.name ?? `sandbox-${randomBytes(4).toString('hex')}`;
    const existing = await this.previousOf(ws.name, name);
    if (existing) {
      if (createIfNotExist && !GONE.has(existing.status ?? '')) return this.view(existing);
      throw this.alreadyExists(ws.name, name);
    }
    const spec: SandboxSpec = withoutNulls({
      ...body.spec,
      region: body.spec.region ?? this.deps.hosts.region,
    });
    checkNetwork(spec);
    this.checkMemory(spec);
    await this.checkImage(ws.name, name, spec);
    const holder = `sandbox:${name}`;
    for (const [i, volume] of (spec.volumes ?? []).entries()) {
      await this.deps.volumes.require(ws.name, volume.name).catch(() => {
        throw invalidField(`spec.volumes.${i}.name`, `volume "${volume.name}" does not exist`);
      });
    }
    const sealed = sealSandboxSpec(this.deps.secrets, spec, sandboxSecretContext(ws.name, name));
    const disabled = spec.enabled === false;
    // A fork (system set) boots on its snapshot's files, a disabled sandbox not at all: never pooled.
    const claimed = system || disabled ? undefined : await this.claimFromPool(ws.name, name, spec, sealed);
    const now = this.deps.now();
    const status = claimed ? 'DEPLOYED' : disabled ? 'DEACTIVATED' : 'DEPLOYING';
    const event = claimed
      ? // Billing starts here (metering reads Deployment/DEPLOYED as RUNNING): the claim, not the boot.
        newEvent(undefined, 'Deployment', 'DEPLOYED', 'Sandbox is running: claimed from the warm pool', now)
      : newEvent(
          undefined,
          'deployment',
          status,
          disabled
            ? 'Sandbox created disabled (spec.enabled: false): not started nor served until enabled'
            : 'Sandbox created; waiting to be started',
          now,
        );
    let raced = false;
    const row = await this.col
      .create(
        {
          ...(claimed ? { id: claimed.recordId } : {}),
          workspace: ws.name,
          name,
          actor,
          ...metadataColumns(body.metadata),
          spec: sealed,
          status,
          ...(claimed
            ? {
                state: 'RUNNING',
                system: {
                  engineId: claimed.engineId,
                  ip: claimed.ip,
                  deployedAt: now.toISOString(),
                  pooled: true,
                  ...(claimed.imageSizeBytes !== undefined ? { imageSizeBytes: claimed.imageSizeBytes } : {}),
                },
              }
            : system
              ? { system }
              : {}),
          event,
        },
        () => this.alreadyExists(ws.name, name),
      )
      .catch(async (err: unknown) => {
        claimed?.discard(); // never back to the pool, never to another create
        // Lost a race with a concurrent create of the same name: answer as if we had seen it.
        const winner = createIfNotExist ? await this.col.find(ws.name, name) : undefined;
        if (!winner || winner.terminatedAt || GONE.has(winner.status ?? '')) throw err;
        raced = true;
        return winner;
      });
    if (claimed && !raced) this.deps.pool?.adopt(row, claimed);
    if (raced) return this.view(row);
    try {
      await this.attachVolumes(ws.name, holder, spec, [], actor);
    } catch (err) {
      // Undo: the sandbox must not exist half-made, holding some of its volumes.
      await this.detachVolumes(ws.name, holder, spec.volumes ?? [], actor);
      await this.col.remove(row);
      throw err;
    }
    return this.view(row);
  }

  async update(ws: WorkspaceAccess, actor: string, name: string, body: SandboxUpdate): Promise<Sandbox> {
    assertSameName(name, body.metadata.name);
    const updated = await this.col.mutate(ws.name, name, actor, async (row) => {
      if ((row.terminatedAt || GONE.has(row.status ?? '')) && row.status !== 'FAILED') {
        throw conflict(`Sandbox "${name}" is being deleted (${row.status ?? ''})`);
      }
      const spec: SandboxSpec = withoutNulls({
        ...body.spec,
        region: body.spec.region ?? row.spec.region ?? this.deps.hosts.region,
      });
      if (spec.region !== row.spec.region) {
        throw invalidField('spec.region', `is immutable after creation (is "${row.spec.region ?? ''}")`);
      }
      // extraArgs are fixed when the sandbox is made (reference sandbox-api §5: immutable).
      if (
        JSON.stringify(spec.runtime?.extraArgs ?? {}) !== JSON.stringify(row.spec.runtime?.extraArgs ?? {})
      ) {
        throw invalidField('spec.runtime.extraArgs', 'is immutable after creation');
      }
      checkNetwork(spec);
      this.checkMemory(spec);
      if (spec.runtime?.image !== row.spec.runtime?.image) await this.checkImage(ws.name, name, spec);
      const holder = `sandbox:${name}`;
      await this.attachVolumes(ws.name, holder, spec, row.spec.volumes ?? [], actor);
      const kept = new Set((spec.volumes ?? []).map((v) => v.name));
      await this.detachVolumes(
        ws.name,
        holder,
        (row.spec.volumes ?? []).filter((v) => !kept.has(v.name)),
        actor,
      );
      const sealed = sealSandboxSpec(this.deps.secrets, spec, sandboxSecretContext(ws.name, name), row.spec);
      // spec.enabled: false stops serving it (issue 14 item 8): the controller freezes it and
      // says DEACTIVATED (reference: "DEACTIVATING and DEACTIVATED happen when enabled=false");
      // enabled again, it deploys like any spec change and resumes where it stopped.
      const disabled = spec.enabled === false;
      const status = disabled ? 'DEACTIVATING' : 'DEPLOYING';
      return {
        patch: { ...metadataColumns(body.metadata, row), spec: sealed, status },
        event: newEvent(
          row,
          'deployment',
          status,
          disabled
            ? 'Sandbox disabled (spec.enabled: false); it stops being served'
            : 'Sandbox spec updated; waiting to be applied',
          this.deps.now(),
        ),
      };
    });
    return this.view(updated);
  }

  /** Marks the sandbox DELETING; the controller stops it, sets TERMINATED and frees its volumes. */
  async delete(ws: WorkspaceAccess, actor: string, name: string): Promise<Sandbox> {
    const row = await this.col.mutate(ws.name, name, actor, async (current) => {
      if (current.terminatedAt || current.status === 'DELETING') return undefined;
      return {
        patch: { status: 'DELETING' },
        event: newEvent(current, 'deployment', 'DELETING', 'Sandbox deletion requested', this.deps.now()),
      };
    });
    await this.deps.onDelete?.(ws.name, name);
    return this.view(row);
  }

  /**
   * A pooled sandbox for this create when the pool holds its shape (issue 20): no volumes and no
   * ports (pool members have neither), image and memory equal. Its envs are the sealed spec's,
   * opened again: exactly what the controller hands a sandbox it boots.
   */
  private async claimFromPool(
    workspace: string,
    name: string,
    spec: SandboxSpec,
    sealed: SandboxSpec,
  ): Promise<ClaimedSandbox | undefined> {
    const pool = this.deps.pool;
    if (!pool || (spec.volumes?.length ?? 0) > 0 || (spec.runtime?.ports?.length ?? 0) > 0) return undefined;
    const context = sandboxSecretContext(workspace, name);
    const env: Record<string, string> = {};
    for (const e of viewSandboxSpec(this.deps.secrets, sealed, context, 'reveal').runtime?.envs ?? []) {
      env[e.name] = e.value ?? '';
    }
    return pool.claim({
      workspace,
      name,
      image: spec.runtime?.image ?? 'tarmac/base:latest',
      memoryMB: spec.runtime?.memory ?? DEFAULT_MEMORY_MB,
      env,
    });
  }

  /**
   * The sandbox that holds this name, if any (issue 14 item 2: a deleted name is free at once).
   * One being deleted is waited for (bounded, woken by the controller's notices), and a
   * TERMINATED record — kept a while only so lists with showTerminated can show it — is removed
   * so the new sandbox can take its name; its usage is charged by the meter up to its removal.
   */
  private async previousOf(workspace: string, name: string): Promise<ResourceRow<SandboxSpec> | undefined> {
    const deadline = this.deps.now().getTime() + REUSE_WAIT_MS;
    for (;;) {
      const watch = this.deps.watchSandbox?.(workspace, name); // before the read: no notice lost
      try {
        const row = await this.col.find(workspace, name);
        if (!row) return undefined;
        if (row.terminatedAt) {
          await this.col.remove(row);
          return undefined;
        }
        const left = deadline - this.deps.now().getTime();
        if (row.status !== 'DELETING' || !watch || left <= 0) return row;
        await watch.next(left);
      } finally {
        watch?.cancel();
      }
    }
  }

  private alreadyExists(workspace: string, name: string): ApiError {
    // Our `{error, code, message}` plus the vendor SDK's SandboxError fields (reference §0, sandbox-api
    // §2.4): the SDK's createIfNotExists retries on `code === 409`.
    return new ApiError('sandbox_already_exists', `Sandbox "${name}" already exists`, {
      extra: {
        sandbox_name: name,
        workspace,
        status_code: 409,
        step: 'create',
        timestamp: this.deps.now().toISOString(),
        reason: 'SANDBOX_ALREADY_EXISTS',
      },
    });
  }

  /**
   * A sandbox asking for more memory than this host could ever give it is refused up front (issue
   * 19 item 13) instead of going FAILED later; one that fits the host but not what is free right
   * now goes FAILED with the engine's reason (the controller's Failure event).
   */
  private checkMemory(spec: SandboxSpec): void {
    const memory = spec.runtime?.memory;
    const max = this.deps.maxMemoryMB;
    if (memory === undefined || max === undefined || memory <= max) return;
    throw invalidField(
      'spec.runtime.memory',
      `must be at most ${max} (MB): this host has ${max} MB of memory for sandboxes`,
    );
  }

  private async checkImage(workspace: string, name: string, spec: SandboxSpec): Promise<void> {
    const image = spec.runtime?.image;
    if (image === undefined || !this.deps.validateImage) return;
    if (await this.deps.validateImage(image, workspace)) return;
    throw new ApiError('invalid_image', `spec.runtime.image: image "${image}" is not available`, {
      details: [{ field: 'spec.runtime.image', message: `image "${image}" is not available` }],
      extra: { sandbox_name: name, workspace, status_code: 400, step: 'create', reason: 'INVALID_IMAGE' },
    });
  }

  private async attachVolumes(
    workspace: string,
    holder: string,
    spec: SandboxSpec,
    already: NonNullable<SandboxSpec['volumes']>,
    actor: string,
  ): Promise<void> {
    const held = new Set(already.map((v) => v.name));
    for (const [i, volume] of (spec.volumes ?? []).entries()) {
      if (held.has(volume.name) || volume.type === 'ephemeral') continue;
      await this.deps.volumes.attach(workspace, volume.name, holder, `spec.volumes.${i}.name`, actor);
    }
  }

  async detachVolumes(
    workspace: string,
    holder: string,
    volumes: NonNullable<SandboxSpec['volumes']>,
    actor: string,
  ): Promise<void> {
    for (const volume of volumes) await this.deps.volumes.detach(workspace, volume.name, holder, actor);
  }
}
