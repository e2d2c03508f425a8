import type { Image, ImageResourceType, PendingImageShare } from '@tarmac/contract';
import {
  conflict,
  invalidField,
  notFound,
  type PageRequest,
  type PageResult,
  type WorkspaceAccess,
} from '@tarmac/server-kit';
import { ResourceCollection, mapPage, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { allRows } from '../workloads/references.js';
import {
  IMAGE_KIND,
  imageKey,
  imageView,
  systemOf,
  tagOf,
  type ImageRow,
  type ShareEntry,
  type StoredImageSpec,
} from './image-rows.js';
import { PendingSharesService } from './pending-shares.service.js';

/**
 * Images and tags (reference §1.9) and sharing (spec Management API rules 1-3): a same-account
 * share copies the image into the target workspace at once and answers the copy; a share into
 * another account needs `targetAccountId` and becomes a pending share the target accepts or declines.
 */
const WORKLOAD_KIND: Record<ImageResourceType, string> = {
  agents: 'agent',
  functions: 'function',
  sandboxes: 'sandbox',
  jobs: 'job',
  applications: 'application',
};

export class ImagesService {
  private readonly rows: ResourceCollection<StoredImageSpec>;
  readonly pending: PendingSharesService;

  constructor(private readonly deps: CollectionDeps) {
    this.rows = new ResourceCollection(deps, IMAGE_KIND, 'Image');
    this.pending = new PendingSharesService(deps, this);
  }

  async list(workspace: string, page: PageRequest): Promise<PageResult<Image>> {
    return mapPage(await this.rows.list(workspace, page), imageView);
  }

  async get(workspace: string, rt: ImageResourceType, name: string): Promise<Image> {
    return imageView(await this.row(workspace, rt, name));
  }

  /** `POST /v0/images` with a prebuilt `image` ref: adds (or moves) the ref's tag. */
  async register(
    workspace: string,
    actor: string,
    body: { resourceType: ImageResourceType; name: string; image: string; size?: number | undefined },
  ) {
    const tag = tagOf(body.image);
    const at = this.deps.now().toISOString();
    const entry = { name: tag, size: body.size ?? 0, createdAt: at, updatedAt: at, source: body.image };
    const row = await this.rows.find(workspace, imageKey(body.resourceType, body.name));
    if (!row) {
      await this.rows.create({
        workspace,
        name: imageKey(body.resourceType, body.name),
        actor,
        displayName: null,
        externalId: null,
        labels: {},
        spec: { tags: [entry] },
        status: 'BUILT',
        event: newEvent(
          undefined,
          'image',
          'BUILT',
          `Tag ${tag} registered from ${body.image}`,
          this.deps.now(),
        ),
      });
    } else {
      const kept = row.spec.tags.find((t) => t.name === tag);
      const tags = [
        ...row.spec.tags.filter((t) => t.name !== tag),
        kept ? { ...entry, createdAt: kept.createdAt } : entry,
      ];
      await this.rows.update(
        row,
        { spec: { tags } },
        actor,
        newEvent(row, 'image', 'BUILT', `Tag ${tag} registered from ${body.image}`, this.deps.now()),
      );
    }
    return {
      name: body.name,
      resourceType: body.resourceType,
      message: `Registered ${body.resourceType}/${body.name}:${tag}`,
      image: `${body.resourceType}/${body.name}:${tag}`,
    };
  }

  /** Fails while a workload of the image's type references it (reference §1.9). */
  async delete(workspace: string, rt: ImageResourceType, name: string): Promise<Image> {
    const row = await this.row(workspace, rt, name);
    const users = await this.usersOf(workspace, rt, name);
    if (users.length > 0) throw conflict(`Image ${rt}/${name} is in use by ${users.join(', ')}`);
    await this.rows.remove(row);
    return imageView(row);
  }

  async deleteTag(
    workspace: string,
    actor: string,
    rt: ImageResourceType,
    name: string,
    tag: string,
  ): Promise<Image> {
    const row = await this.row(workspace, rt, name);
    if (!row.spec.tags.some((t) => t.name === tag)) throw notFound(`Tag "${tag}" of image ${rt}/${name}`);
    const tags = row.spec.tags.filter((t) => t.name !== tag);
    const event = newEvent(row, 'image', row.status ?? 'BUILT', `Tag ${tag} deleted`, this.deps.now());
    return imageView(await this.rows.update(row, { spec: { tags } }, actor, event));
  }

  async shares(workspace: string, rt: ImageResourceType, name: string): Promise<ShareEntry[]> {
    return systemOf(await this.row(workspace, rt, name)).shares ?? [];
  }

  /** `POST .../share` (spec rules 1-3). Same account: 200 and the copy; other account: 202 and a pending share. */
  async share(
    access: WorkspaceAccess,
    actor: string,
    rt: ImageResourceType,
    name: string,
    body: { targetWorkspace: string; targetAccountId?: string | undefined },
  ): Promise<{ status: 200; image: Image } | { status: 202; pending: PendingImageShare }> {
    const source = await this.row(access.name, rt, name);
    if (body.targetWorkspace === access.name) {
      throw invalidField('body.targetWorkspace', 'is the source workspace; share into another workspace');
    }
    const target = await this.deps.store.workspaces.get(body.targetWorkspace);
    if (!target) throw notFound(`Workspace "${body.targetWorkspace}"`);
    if (target.accountId === access.accountId) {
      if (body.targetAccountId !== undefined && body.targetAccountId !== target.accountId) {
        throw invalidField('body.targetAccountId', `does not own workspace "${body.targetWorkspace}"`);
      }
      return { status: 200, image: await this.copyInto(source, target.name, actor, false) };
    }
    if (body.targetAccountId === undefined) {
      throw invalidField(
        'body.targetAccountId',
        `is required: workspace "${body.targetWorkspace}" belongs to another account`,
      );
    }
    if (body.targetAccountId !== target.accountId) {
      throw notFound(`Workspace "${body.targetWorkspace}" in account "${body.targetAccountId}"`);
    }
    return {
      status: 202,
      pending: await this.pending.open(access, actor, source, target.name, target.accountId),
    };
  }

  /** Stops sharing: removes the copy in the target (if it still comes from here) and the entry. */
  async unshare(
    access: WorkspaceAccess,
    actor: string,
    rt: ImageResourceType,
    name: string,
    targetWorkspace: string,
  ) {
    const source = await this.row(access.name, rt, name);
    const shares = systemOf(source).shares ?? [];
    if (!shares.some((s) => s.targetWorkspace === targetWorkspace)) {
      throw notFound(`Share of image ${rt}/${name} with workspace "${targetWorkspace}"`);
    }
    const copy = await this.rows.find(targetWorkspace, imageKey(rt, name));
    if (copy && systemOf(copy).sourceWorkspace === access.name) await this.rows.remove(copy);
    const remaining = shares.filter((s) => s.targetWorkspace !== targetWorkspace);
    const event = newEvent(
      source,
      'share',
      source.status ?? 'BUILT',
      `Unshared from ${targetWorkspace}`,
      this.deps.now(),
    );
    await this.rows.update(source, { system: { ...source.system, shares: remaining } }, actor, event);
    return remaining;
  }

  /**
   * Writes the copy of `source` into `targetWorkspace`. An image of that name there that is not
   * this share's copy is a 409 unless `force` (pending-share accept) replaces it.
   */
  async copyInto(source: ImageRow, targetWorkspace: string, actor: string, force: boolean): Promise<Image> {
    const now = this.deps.now();
    const existing = await this.rows.find(targetWorkspace, source.name);
    const system = { sourceWorkspace: source.workspace };
    const message = `Shared from workspace ${source.workspace}`;
    let copy: ImageRow;
    if (!existing) {
      copy = await this.rows.create({
        workspace: targetWorkspace,
        name: source.name,
        actor,
        displayName: source.displayName,
        externalId: null,
        labels: source.labels,
        spec: source.spec,
        status: source.status,
        system,
        event: newEvent(undefined, 'share', source.status ?? 'BUILT', message, now),
      });
    } else {
      if (systemOf(existing).sourceWorkspace !== source.workspace && !force) {
        throw conflict(`Workspace "${targetWorkspace}" already has an image ${source.name}`);
      }
      copy = await this.rows.update(
        existing,
        { spec: source.spec, status: source.status, system: { ...existing.system, ...system } },
        actor,
        newEvent(existing, 'share', source.status ?? 'BUILT', message, now),
      );
    }
    const shares = (systemOf(source).shares ?? []).filter((s) => s.targetWorkspace !== targetWorkspace);
    shares.push({ targetWorkspace, createdAt: now.toISOString(), createdBy: actor });
    const fresh = (await this.rows.find(source.workspace, source.name)) ?? source;
    await this.rows.update(fresh, { system: { ...fresh.system, shares } }, actor);
    return imageView(copy);
  }

  async row(workspace: string, rt: string, name: string): Promise<ImageRow> {
    const row = await this.rows.find(workspace, imageKey(rt, name));
    if (!row) throw notFound(`Image ${rt}/${name}`);
    return row;
  }

  private async usersOf(workspace: string, rt: ImageResourceType, name: string): Promise<string[]> {
    const kind = WORKLOAD_KIND[rt];
    // Applications name their image at `spec.image`, the other workloads at `spec.runtime.image`.
    const rows = await allRows<{ runtime?: { image?: string }; image?: string }>(
      this.deps.store,
      workspace,
      kind,
    );
    const prefixes = [`${rt}/${name}:`, `${kind}/${name}:`];
    return rows
      .filter((r) => {
        const image = r.spec.runtime?.image ?? r.spec.image ?? '';
        return (
          prefixes.some((p) => image.startsWith(p)) ||
          image === `${rt}/${name}` ||
          image === `${kind}/${name}`
        );
      })
      .map((r) => `${kind} "${r.name}"`);
  }
}
