import type { Volume, VolumeInput, VolumeSpec } from '@tarmac/contract';
import { conflict, invalidField, notFound, type PageRequest, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomUUID } from 'node:crypto';
import {
  ResourceCollection,
  listFilter,
  mapPage,
  type CollectionDeps,
} from '../../../framework/collection.js';
import { newEvent, statusFromEvents } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import { VOLUME_KIND } from '../../../framework/kinds.js';
import { holderOf, holderPatch } from '../records/volume-holder.js';
export { VOLUME_KIND } from '../../../framework/kinds.js';

/** Default size in MB (reference sandbox-api §5: SDK default 1024). */
export const DEFAULT_VOLUME_SIZE_MB = 1024;

interface ListQuery {
  status?: string[] | undefined;
  showTerminated?: boolean | undefined;
  externalId?: string | undefined;
}

/**
 * Volumes (spec "Volume"; reference §1.7, §2.6): spec immutable after creation except that size
 * may grow; one holder at a time (`state.attachedTo`, e.g. `sandbox:web`), and a held volume cannot
 * be deleted (409). Deletion marks the record terminated (`terminatedAt`); the name is free again.
 * `status` is computed from events and mirrored in the status column for the `status` filter.
 */
export class VolumesService {
  readonly col: ResourceCollection<VolumeSpec>;

  constructor(private readonly deps: CollectionDeps) {
    this.col = new ResourceCollection<VolumeSpec>(deps, VOLUME_KIND, 'Volume');
  }

  view(row: ResourceRow<VolumeSpec>): Volume {
    return {
      metadata: envelopeMetadata(row, `${this.deps.apiUrl()}/v0/volumes/${row.name}`),
      spec: row.spec,
      events: eventsOf(row),
      state: { attachedTo: holderOf(row) },
      status: statusFromEvents(row.events),
      ...(row.terminatedAt ? { terminatedAt: row.terminatedAt } : {}),
    };
  }

  async list(ws: WorkspaceAccess, page: PageRequest, query: ListQuery) {
    return mapPage(await this.col.list(ws.name, page, listFilter(query)), (r) => this.view(r));
  }

  async get(ws: WorkspaceAccess, name: string): Promise<Volume> {
    return this.view(await this.col.get(ws.name, name));
  }

  async getByExternalId(ws: WorkspaceAccess, externalId: string): Promise<Volume> {
    return this.view(await this.col.getByExternalId(ws.name, externalId));
  }

  async create(ws: WorkspaceAccess, actor: string, body: VolumeInput): Promise<Volume> {
    const name = body.metadata.name;
    const existing = await this.col.find(ws.name, name);
    // A terminated volume no longer holds its name (reference: deleted volumes are only records).
    if (existing?.terminatedAt) await this.col.remove(existing);
    // Stored and ignored was the defect (issue 14 item 8): there are no volume templates here.
    if (body.spec.template !== undefined) {
      throw invalidField(
        'spec.template',
        'volume templates are not available on this platform: create the volume empty and fill it from a sandbox',
      );
    }
    const spec: VolumeSpec = {
      region: body.spec.region ?? this.deps.hosts.region,
      size: body.spec.size ?? DEFAULT_VOLUME_SIZE_MB,
      ...(body.spec.template !== undefined ? { template: body.spec.template } : {}),
      infrastructureId: `vol-${randomUUID()}`,
    };
    const event = newEvent(
      undefined,
      'created',
      'DEPLOYED',
      `Volume created (${spec.size} MB); storage is allocated on first mount`,
      this.deps.now(),
    );
    const row = await this.col.create({
      workspace: ws.name,
      name,
      actor,
      ...metadataColumns(body.metadata),
      spec,
      status: event.status,
      system: { attachedTo: '' },
      event,
    });
    return this.view(row);
  }

  async update(ws: WorkspaceAccess, actor: string, name: string, body: VolumeInput): Promise<Volume> {
    assertSameName(name, body.metadata.name);
    const row = await this.col.get(ws.name, name);
    if (row.terminatedAt) throw conflict(`Volume "${name}" is terminated`);
    const before = row.spec;
    const input = body.spec;
    if (input.region !== undefined && input.region !== before.region) {
      throw invalidField('spec.region', `is immutable after creation (is "${before.region ?? ''}")`);
    }
    if (input.template !== undefined && input.template !== before.template) {
      throw invalidField('spec.template', `is immutable after creation (is "${before.template ?? ''}")`);
    }
    const size = input.size ?? before.size ?? DEFAULT_VOLUME_SIZE_MB;
    if (size < (before.size ?? 0)) {
      throw invalidField('spec.size', `can only grow: ${size} MB is less than the current ${before.size} MB`);
    }
    const grew = size !== before.size;
    const event = newEvent(
      row,
      grew ? 'resized' : 'updated',
      statusFromEvents(row.events),
      grew ? `Volume grown from ${before.size} MB to ${size} MB` : 'Volume metadata updated',
      this.deps.now(),
    );
    const updated = await this.col.update(
      row,
      { ...metadataColumns(body.metadata, row), spec: { ...before, size } },
      actor,
      event,
    );
    return this.view(updated);
  }

  async delete(ws: WorkspaceAccess, actor: string, name: string): Promise<Volume> {
    const row = await this.col.mutate(ws.name, name, actor, async (current) => {
      if (current.terminatedAt) return undefined;
      const holder = holderOf(current);
      if (holder) throw conflict(`Volume "${name}" is attached to ${holder}; delete or detach it first`);
      const at = this.deps.now();
      const event = newEvent(current, 'terminated', 'TERMINATED', 'Volume marked for termination', at);
      return { patch: { status: event.status, terminatedAt: at.toISOString() }, event };
    });
    return this.view(row);
  }

  /**
   * Reserves a volume for `holder` (e.g. `sandbox:web`): it must exist, be live and be free or
   * already held by the same holder; `field` names the request field in a 400.
   * Called by the sandbox service on create/update and by the sandbox controller.
   */
  async attach(workspace: string, name: string, holder: string, field: string, actor: string): Promise<void> {
    const exists = await this.col.find(workspace, name);
    if (!exists || exists.terminatedAt) throw invalidField(field, `volume "${name}" does not exist`);
    await this.col.mutate(workspace, name, actor, async (row) => {
      if (row.terminatedAt) throw invalidField(field, `volume "${name}" does not exist`);
      const current = holderOf(row);
      if (current === holder) return undefined;
      if (current) throw conflict(`Volume "${name}" is already attached to ${current}`);
      const event = newEvent(
        row,
        'attached',
        statusFromEvents(row.events),
        `Attached to ${holder}`,
        this.deps.now(),
      );
      return { patch: holderPatch(row, holder), event };
    });
  }

  /** Frees a volume held by `holder`; a no-op when it is gone or held by someone else. */
  async detach(workspace: string, name: string, holder: string, actor: string): Promise<void> {
    if (!(await this.col.find(workspace, name))) return;
    await this.col.mutate(workspace, name, actor, async (row) => {
      if (row.system.attachedTo !== holder) return undefined;
      const event = newEvent(
        row,
        'detached',
        statusFromEvents(row.events),
        `Detached from ${holder}`,
        this.deps.now(),
      );
      return { patch: holderPatch(row, ''), event };
    });
  }

  /** The live volume or a 404 (for callers outside HTTP, e.g. controllers). */
  async require(workspace: string, name: string): Promise<ResourceRow<VolumeSpec>> {
    const row = await this.col.find(workspace, name);
    if (!row || row.terminatedAt) throw notFound(`Volume "${name}"`);
    return row;
  }
}
