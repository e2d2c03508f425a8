import type { ForkRequest, ForkResponse, SandboxSpec, Snapshot, SnapshotCreate } from '@tarmac/contract';
import { ApiError, conflict, invalidField, notFound, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { SANDBOX_SNAPSHOT_KIND } from '../../../framework/kinds.js';
import { sandboxSecretContext, viewSandboxSpec } from '../records/sandbox-secrets.js';
import type { SandboxesService } from '../records/sandboxes.service.js';

/** Snapshots one sandbox may keep (issue 14 item 6: bounded). */
export const DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX = 10;
/** Bytes all snapshots of this platform may hold together; a snapshot past it is refused. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 20 * 1024 ** 3;

/**
 * What the sandbox plane's runtime half does for snapshots (sandbox-plane.ts, over the engine):
 * freeze the live sandbox, copy its writable layer and volumes, thaw it; delete a copy.
 */
export interface SnapshotStorage {
  take(workspace: string, sandboxName: string, snapshotId: string): Promise<{ sizeBytes: number }>;
  remove(snapshotId: string): void;
}

interface SnapshotSpec {
  sizeBytes: number;
}
type SnapshotRow = ResourceRow<SnapshotSpec>;

/**
 * Sandbox snapshots and forks (reference control-plane §1.6; the honest version on this machine,
 * issue 14 item 6): records under their sandbox (`parent`), the snapshot id as `externalId` so
 * `DELETE /v0/snapshots/{id}` finds it within the caller's workspace only. Files only, no memory
 * (contract sandbox-snapshot.ts says so to users). Deleted with their sandbox.
 */
export class SnapshotsService {
  readonly col: ResourceCollection<SnapshotSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly sandboxes: SandboxesService,
    private readonly storage: SnapshotStorage | undefined,
    private readonly limits = {
      perSandbox: DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX,
      totalBytes: DEFAULT_MAX_SNAPSHOT_BYTES,
    },
  ) {
    this.col = new ResourceCollection<SnapshotSpec>(deps, SANDBOX_SNAPSHOT_KIND, 'Snapshot');
  }

  view(row: SnapshotRow): Snapshot {
    return {
      id: row.externalId ?? row.id,
      name: row.name,
      sandboxName: row.parent,
      workspace: row.workspace,
      status: (row.status ?? 'pending') as Snapshot['status'],
      createdAt: row.createdAt,
      createdBy: row.createdBy,
      sizeBytes: row.spec.sizeBytes,
      contents: 'filesystem',
      source: { name: row.parent, kind: 'sandbox' },
    };
  }

  private async sandbox(ws: WorkspaceAccess, sandboxName: string) {
    const row = await this.sandboxes.col.get(ws.name, sandboxName);
    if (row.terminatedAt) throw notFound(`Sandbox "${sandboxName}"`);
    return row;
  }

  async list(ws: WorkspaceAccess, sandboxName: string): Promise<Snapshot[]> {
    await this.sandbox(ws, sandboxName);
    const page = await this.col.list(
      ws.name,
      { sort: 'createdAt:desc', limit: this.limits.perSandbox + 1 },
      { parent: sandboxName },
    );
    return page.items.map((r) => this.view(r));
  }

  async create(ws: WorkspaceAccess, actor: string, sandboxName: string, body: SnapshotCreate) {
    const source = await this.sandbox(ws, sandboxName);
    return this.view(await this.take(ws, actor, source.name, source.status, body.name));
  }

  async get(ws: WorkspaceAccess, snapshotId: string): Promise<Snapshot> {
    return this.view(await this.byId(ws, snapshotId));
  }

  /**
   * DELETE /v0/snapshots/{id}: another workspace's snapshot is a 404 like a missing one. Under a
   * sandbox the name works too (the vendor SDK's `sandbox.snapshots.delete(name)`).
   */
  async delete(ws: WorkspaceAccess, snapshotId: string, sandboxName?: string): Promise<void> {
    let row: SnapshotRow | undefined;
    if (sandboxName !== undefined) {
      await this.sandbox(ws, sandboxName);
      row = await this.col.find(ws.name, snapshotId, sandboxName);
    }
    row ??= await this.byId(ws, snapshotId);
    if (sandboxName !== undefined && row.parent !== sandboxName) throw notFound(`Snapshot "${snapshotId}"`);
    await this.col.remove(row);
    if (row.externalId) this.storage?.remove(row.externalId);
  }

  async fork(
    ws: WorkspaceAccess,
    actor: string,
    sandboxName: string,
    body: ForkRequest,
  ): Promise<ForkResponse> {
    if (body.targetType !== 'sandbox') {
      throw invalidField(
        'targetType',
        'only "sandbox" is supported: this platform has no application runtime to fork into',
      );
    }
    for (const field of ['port', 'prefix', 'customDomain', 'traffic'] as const) {
      if (body[field] !== undefined) throw invalidField(field, 'applies to an application target only');
    }
    const source = await this.sandbox(ws, sandboxName);
    const existing = await this.sandboxes.col.find(ws.name, body.targetName);
    if (existing) throw conflict(`Sandbox "${body.targetName}" already exists`);
    let snapshot: SnapshotRow;
    if (body.snapshotId !== undefined) {
      snapshot = await this.byId(ws, body.snapshotId);
      if (snapshot.parent !== sandboxName)
        throw notFound(`Snapshot "${body.snapshotId}" of sandbox "${sandboxName}"`);
      if (snapshot.status !== 'ready')
        throw conflict(`Snapshot "${body.snapshotId}" is ${snapshot.status ?? ''}`);
    } else {
      const name = `fork-${body.targetName}`.slice(0, 40) + `-${randomBytes(3).toString('hex')}`;
      snapshot = await this.take(ws, actor, source.name, source.status, name);
    }
    // The source's settings with its secrets opened (the fork seals them under its own name), its
    // volumes dropped: their contents are in the snapshot, at the same paths, in the fork's layer.
    const spec = viewSandboxSpec(
      this.deps.secrets,
      source.spec as SandboxSpec,
      sandboxSecretContext(ws.name, source.name),
      'reveal',
    );
    const overridden = new Set((body.envs ?? []).map((e) => e.name));
    const envs = [...(spec.runtime?.envs ?? []).filter((e) => !overridden.has(e.name)), ...(body.envs ?? [])];
    const { volumes: _volumes, ...rest } = spec;
    const snapshotId = snapshot.externalId ?? snapshot.id;
    await this.sandboxes.create(
      ws,
      actor,
      {
        metadata: { name: body.targetName, labels: source.labels },
        spec: { ...rest, runtime: { ...spec.runtime, envs } },
      },
      false,
      { seedSnapshot: snapshotId, forkedFrom: { sandbox: source.name, snapshotId } },
    );
    return { name: body.targetName, type: 'sandbox', snapshotId };
  }

  /** Removes every snapshot of a sandbox, files included (the sandbox is being deleted). */
  async removeAllOf(workspace: string, sandboxName: string): Promise<void> {
    for (;;) {
      const page = await this.col.list(
        workspace,
        { sort: 'createdAt:asc', limit: 200 },
        { parent: sandboxName },
      );
      for (const row of page.items) {
        await this.col.remove(row);
        if (row.externalId) this.storage?.remove(row.externalId);
      }
      if (!page.hasMore || page.items.length === 0) return;
    }
  }

  private async byId(ws: WorkspaceAccess, snapshotId: string): Promise<SnapshotRow> {
    const row = await this.deps.store.resources.getByExternalId<SnapshotSpec>(
      ws.name,
      SANDBOX_SNAPSHOT_KIND,
      snapshotId,
    );
    if (!row) throw notFound(`Snapshot "${snapshotId}"`);
    return row;
  }

  private async take(
    ws: WorkspaceAccess,
    actor: string,
    sandboxName: string,
    status: string | null,
    name = `snapshot-${randomBytes(4).toString('hex')}`,
  ): Promise<SnapshotRow> {
    if (!this.storage) throw new ApiError('unavailable', 'snapshots need the sandbox engine');
    if (status !== 'DEPLOYED') {
      throw conflict(
        `Sandbox "${sandboxName}" is ${status ?? 'not running'}; only a DEPLOYED sandbox can be snapshotted`,
      );
    }
    const count = await this.col.list(ws.name, { sort: 'createdAt:desc', limit: 1 }, { parent: sandboxName });
    if (count.total >= this.limits.perSandbox) {
      throw conflict(
        `Sandbox "${sandboxName}" has ${count.total} snapshots, the most it may keep; delete one first`,
      );
    }
    const all = await this.deps.store.resources.listByKind<SnapshotSpec>(SANDBOX_SNAPSHOT_KIND);
    const used = all.reduce((n, r) => n + (r.spec.sizeBytes ?? 0), 0);
    if (used >= this.limits.totalBytes) {
      throw conflict(`Snapshots hold ${used} bytes on this platform, the most they may; delete some first`);
    }
    const id = `snap-${randomBytes(6).toString('hex')}`;
    const row = await this.col.create({
      workspace: ws.name,
      parent: sandboxName,
      name,
      actor,
      displayName: null,
      externalId: id,
      labels: {},
      spec: { sizeBytes: 0 },
      status: 'pending',
      event: newEvent(undefined, 'snapshot', 'DEPLOYING', 'Copying the sandbox’s files', this.deps.now()),
    });
    try {
      const { sizeBytes } = await this.storage.take(ws.name, sandboxName, id);
      return await this.col.update(
        row,
        { spec: { sizeBytes }, status: 'ready' },
        actor,
        newEvent(row, 'snapshot', 'DEPLOYED', `Copied ${sizeBytes} bytes`, this.deps.now()),
      );
    } catch (err) {
      // Nothing half-made stays: the record and any partial copy go (the copy cleans itself up).
      await this.col.remove(row);
      this.storage.remove(id);
      if (err instanceof ApiError) throw err;
      throw new ApiError('internal_error', `Snapshot of "${sandboxName}" failed: ${(err as Error).message}`);
    }
  }
}
