import type { Image, PendingImageShare } from '@tarmac/contract';
import { ApiError, conflict, notFound, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { PENDING_SHARE_KIND, splitKey, type ImageRow } from './image-rows.js';

/**
 * Cross-account image shares (reference §1.9 "Pending shares"): the source opens one (202), an
 * admin of the target workspace accepts (the copy appears there) or declines (204). A share not
 * answered within SHARE_TTL_DAYS is gone (410). Rows live in the source workspace, named by id.
 */
const SHARE_TTL_DAYS = 7;

interface ShareSpec {
  image: string;
  sourceAccountId: string;
  targetWorkspace: string;
  targetAccountId: string;
  expiresAt: string;
}
type ShareRow = ResourceRow<ShareSpec>;

/** What accepting a share needs of the images service (handed in by it; no import back). */
export interface ImageSource {
  row(workspace: string, resourceType: string, name: string): Promise<ImageRow>;
  copyInto(source: ImageRow, targetWorkspace: string, actor: string, force: boolean): Promise<Image>;
}

export class PendingSharesService {
  private readonly rows: ResourceCollection<ShareSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly images: ImageSource,
  ) {
    this.rows = new ResourceCollection(deps, PENDING_SHARE_KIND, 'Pending image share');
  }

  async open(
    access: WorkspaceAccess,
    actor: string,
    image: ImageRow,
    targetWorkspace: string,
    targetAccountId: string,
  ): Promise<PendingImageShare> {
    const open = (await this.all()).find(
      (r) =>
        r.workspace === access.name &&
        r.spec.image === image.name &&
        r.spec.targetWorkspace === targetWorkspace &&
        this.statusOf(r) === 'pending',
    );
    if (open)
      throw conflict(
        `Image ${image.name} already has a pending share to "${targetWorkspace}" (${open.name})`,
      );
    const now = this.deps.now();
    const row = await this.rows.create({
      workspace: access.name,
      name: `pis_${randomBytes(9).toString('hex')}`,
      actor,
      displayName: null,
      externalId: null,
      labels: {},
      spec: {
        image: image.name,
        sourceAccountId: access.accountId,
        targetWorkspace,
        targetAccountId,
        expiresAt: new Date(now.getTime() + SHARE_TTL_DAYS * 86_400_000).toISOString(),
      },
      status: 'pending',
      event: newEvent(
        undefined,
        'share',
        'pending',
        `Waiting for workspace ${targetWorkspace} to accept`,
        now,
      ),
    });
    return this.view(row);
  }

  async list(workspace: string, direction: 'incoming' | 'outgoing'): Promise<PendingImageShare[]> {
    const rows = await this.all();
    return rows
      .filter((r) =>
        direction === 'incoming' ? r.spec.targetWorkspace === workspace : r.workspace === workspace,
      )
      .filter((r) => this.statusOf(r) === 'pending')
      .map((r) => this.view(r));
  }

  /** Accept (target admins): the copy appears in the target; `force` replaces a same-named image. */
  async accept(access: WorkspaceAccess, actor: string, id: string, force: boolean): Promise<Image> {
    const row = await this.answerable(access, id);
    const { resourceType, name } = splitKey(row.spec.image);
    const source = await this.images.row(row.workspace, resourceType, name).catch(() => {
      throw new ApiError('gone', `The shared image ${row.spec.image} no longer exists`);
    });
    const image = await this.images.copyInto(source, access.name, actor, force);
    await this.rows.update(
      row,
      { status: 'accepted' },
      actor,
      newEvent(row, 'share', 'accepted', `Accepted by ${access.name}`, this.deps.now()),
    );
    return image;
  }

  async decline(access: WorkspaceAccess, actor: string, id: string): Promise<null> {
    const row = await this.answerable(access, id);
    await this.rows.update(
      row,
      { status: 'declined' },
      actor,
      newEvent(row, 'share', 'declined', `Declined by ${access.name}`, this.deps.now()),
    );
    return null;
  }

  /** Only the target workspace sees the share (404 otherwise); answered → 409; expired → 410. */
  private async answerable(access: WorkspaceAccess, id: string): Promise<ShareRow> {
    const row = (await this.all()).find((r) => r.name === id && r.spec.targetWorkspace === access.name);
    if (!row) throw notFound(`Pending image share "${id}"`);
    const status = this.statusOf(row);
    if (status === 'expired')
      throw new ApiError('gone', `Pending image share "${id}" expired at ${row.spec.expiresAt}`);
    if (status !== 'pending') throw conflict(`Pending image share "${id}" was already ${status}`);
    return row;
  }

  private statusOf(row: ShareRow): PendingImageShare['status'] {
    if (row.status === 'pending' && Date.parse(row.spec.expiresAt) <= this.deps.now().getTime())
      return 'expired';
    return (row.status ?? 'pending') as PendingImageShare['status'];
  }

  private all(): Promise<ShareRow[]> {
    return this.deps.store.resources.listByKind<ShareSpec>(PENDING_SHARE_KIND);
  }

  private view(row: ShareRow): PendingImageShare {
    const { resourceType, name } = splitKey(row.spec.image);
    return {
      id: row.name,
      resourceType,
      imageName: name,
      sourceWorkspace: row.workspace,
      sourceAccountId: row.spec.sourceAccountId,
      targetWorkspace: row.spec.targetWorkspace,
      targetAccountId: row.spec.targetAccountId,
      status: this.statusOf(row),
      createdAt: row.createdAt,
      createdBy: row.createdBy,
      expiresAt: row.spec.expiresAt,
    };
  }
}
