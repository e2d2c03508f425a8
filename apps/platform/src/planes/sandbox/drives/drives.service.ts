import type { Drive, DriveInput, DriveSpec } from '@tarmac/contract';
import { conflict, invalidField, type PageRequest, type WorkspaceAccess } from '@tarmac/server-kit';
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
import { DRIVE_KIND } from '../../../framework/kinds.js';
export { DRIVE_KIND } from '../../../framework/kinds.js';

/**
 * Mints a drive access token (reference §1.8 `access-token`). The identity plane owns the signing
 * key; the composition root hands its signer in (planes/identity/auth/drive-token.ts).
 */
export type DriveTokenSigner = (
  claims: { workspace: string; drive: string; subject: string },
  ttlSeconds: number,
) => Promise<string>;
export const DRIVE_TOKEN_TTL_SECONDS = 900;
/** Said plainly in status and events until a storage backend serves drives (issue 3). */
export const NOT_BACKED_MESSAGE =
  'Drive recorded, but no storage backs drives on this installation yet: mounting it and S3 access with its token will fail until a drive backend is configured';

interface ListQuery {
  status?: string[] | undefined;
  showTerminated?: boolean | undefined;
  externalId?: string | undefined;
}

/**
 * Drives (spec "Drive"; reference §1.8, §2.6): records with an immutable spec, a status computed
 * from events (FAILED, saying no storage backs it, for now), and short-lived access tokens scoped to one drive.
 */
export class DrivesService {
  readonly col: ResourceCollection<DriveSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly sign: DriveTokenSigner,
  ) {
    this.col = new ResourceCollection<DriveSpec>(deps, DRIVE_KIND, 'Drive');
  }

  view(row: ResourceRow<DriveSpec>): Drive {
    return {
      metadata: envelopeMetadata(row, `${this.deps.apiUrl()}/v0/drives/${row.name}`),
      spec: row.spec,
      events: eventsOf(row),
      state: { s3Url: typeof row.system.s3Url === 'string' ? row.system.s3Url : '' },
      status: statusFromEvents(row.events),
      ...(row.terminatedAt ? { terminatedAt: row.terminatedAt } : {}),
    };
  }

  async list(ws: WorkspaceAccess, page: PageRequest, query: ListQuery) {
    return mapPage(await this.col.list(ws.name, page, listFilter(query)), (r) => this.view(r));
  }

  async get(ws: WorkspaceAccess, name: string): Promise<Drive> {
    return this.view(await this.col.get(ws.name, name));
  }

  async getByExternalId(ws: WorkspaceAccess, externalId: string): Promise<Drive> {
    return this.view(await this.col.getByExternalId(ws.name, externalId));
  }

  async create(ws: WorkspaceAccess, actor: string, body: DriveInput): Promise<Drive> {
    const existing = await this.col.find(ws.name, body.metadata.name);
    if (existing?.terminatedAt) await this.col.remove(existing);
    const { infrastructureId: _ignored, ...input } = body.spec;
    const spec: DriveSpec = {
      ...input,
      region: input.region ?? this.deps.hosts.region,
      infrastructureId: `drv-${randomUUID()}`,
    };
    // Event statuses come from the deployment status enum only (spec "Events" rule 1; issue 14
    // item 8): a drive no storage backs is FAILED, and the message says why.
    const event = newEvent(undefined, 'deployment', 'FAILED', NOT_BACKED_MESSAGE, this.deps.now());
    const row = await this.col.create({
      workspace: ws.name,
      name: body.metadata.name,
      actor,
      ...metadataColumns(body.metadata),
      spec,
      status: event.status,
      system: { s3Url: '' },
      event,
    });
    return this.view(row);
  }

  /** Metadata may change; spec is immutable after creation (spec "Drive"): a change is a 400 naming it. */
  async update(ws: WorkspaceAccess, actor: string, name: string, body: DriveInput): Promise<Drive> {
    assertSameName(name, body.metadata.name);
    const row = await this.col.get(ws.name, name);
    if (row.terminatedAt) throw conflict(`Drive "${name}" is terminated`);
    for (const field of ['permissions', 'region', 'size'] as const) {
      const given = body.spec[field];
      if (given !== undefined && JSON.stringify(given) !== JSON.stringify(row.spec[field])) {
        throw invalidField(`spec.${field}`, 'is immutable after creation');
      }
    }
    const event = newEvent(
      row,
      'updated',
      statusFromEvents(row.events),
      'Drive metadata updated',
      this.deps.now(),
    );
    return this.view(await this.col.update(row, metadataColumns(body.metadata, row), actor, event));
  }

  async delete(ws: WorkspaceAccess, actor: string, name: string): Promise<Drive> {
    const row = await this.col.get(ws.name, name);
    if (row.terminatedAt) return this.view(row);
    const at = this.deps.now();
    const event = newEvent(row, 'terminated', 'TERMINATED', 'Drive deleted', at);
    return this.view(
      await this.col.update(row, { status: event.status, terminatedAt: at.toISOString() }, actor, event),
    );
  }

  async accessToken(ws: WorkspaceAccess, subject: string, name: string) {
    const row = await this.col.get(ws.name, name);
    if (row.terminatedAt) throw conflict(`Drive "${name}" is terminated`);
    const token = await this.sign({ workspace: ws.name, drive: name, subject }, DRIVE_TOKEN_TTL_SECONDS);
    return { access_token: token, expires_in: DRIVE_TOKEN_TTL_SECONDS, token_type: 'Bearer' as const };
  }
}
