import { StaleRevisionError, uniquely } from '../errors.js';
import type { Kysely, Selectable } from 'kysely';
import { keysetPage, type ListPage, type Page } from '../page.js';
import type { Database, ResourcesTable } from '../schema.js';

/** Element of a resource's `events` (spec "Common envelope"). */
export interface ResourceEvent {
  type: string;
  status: string;
  message: string;
  revision: string;
  canaryRevision: string;
  time: string;
}

/** One managed resource: the envelope plus system-owned fields. JSON columns are decoded. */
export interface ResourceRow<Spec = unknown> {
  id: string;
  workspace: string;
  kind: string;
  parent: string;
  name: string;
  displayName: string | null;
  externalId: string | null;
  labels: Record<string, string>;
  spec: Spec;
  status: string | null;
  state: string | null;
  system: Record<string, unknown>;
  events: ResourceEvent[];
  revision: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
  terminatedAt: string | null;
}

export type NewResource<Spec = unknown> = Omit<ResourceRow<Spec>, 'revision'>;

export type ResourcePatch = Partial<
  Pick<
    ResourceRow,
    | 'displayName'
    | 'externalId'
    | 'labels'
    | 'spec'
    | 'status'
    | 'state'
    | 'system'
    | 'events'
    | 'terminatedAt'
    | 'updatedAt'
    | 'updatedBy'
  >
>;

export interface ResourceFilter {
  parent?: string;
  /** Only these statuses. */
  status?: readonly string[];
  /** Terminated resources are hidden unless this is true. */
  includeTerminated?: boolean;
  /** Only resources with this caller-owned external id. */
  externalId?: string;
}

/** Events kept per resource: the newest win; the oldest are dropped past this. */
export const MAX_EVENTS = 100;

const fromRow = <Spec>(r: Selectable<ResourcesTable>): ResourceRow<Spec> => ({
  id: r.id,
  workspace: r.workspace,
  kind: r.kind,
  parent: r.parent,
  name: r.name,
  displayName: r.display_name,
  externalId: r.external_id,
  labels: JSON.parse(r.labels) as Record<string, string>,
  spec: JSON.parse(r.spec) as Spec,
  status: r.status,
  state: r.state,
  system: JSON.parse(r.system) as Record<string, unknown>,
  events: JSON.parse(r.events) as ResourceEvent[],
  revision: Number(r.revision),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  terminatedAt: r.terminated_at,
});

function toColumns(patch: ResourcePatch) {
  return {
    ...(patch.displayName !== undefined ? { display_name: patch.displayName } : {}),
    ...(patch.externalId !== undefined ? { external_id: patch.externalId } : {}),
    ...(patch.labels !== undefined ? { labels: JSON.stringify(patch.labels) } : {}),
    ...(patch.spec !== undefined ? { spec: JSON.stringify(patch.spec) } : {}),
    ...(patch.status !== undefined ? { status: patch.status } : {}),
    ...(patch.state !== undefined ? { state: patch.state } : {}),
    ...(patch.system !== undefined ? { system: JSON.stringify(patch.system) } : {}),
    ...(patch.events !== undefined ? { events: JSON.stringify(patch.events.slice(-MAX_EVENTS)) } : {}),
    ...(patch.terminatedAt !== undefined ? { terminated_at: patch.terminatedAt } : {}),
    ...(patch.updatedAt !== undefined ? { updated_at: patch.updatedAt } : {}),
    ...(patch.updatedBy !== undefined ? { updated_by: patch.updatedBy } : {}),
  };
}

/**
 * The resource catalogue's one table. Names are unique per (workspace, kind, parent); every update
 * bumps `revision`, and passing the revision read makes the update conditional (optimistic
 * concurrency between API handlers and controllers).
 */
export function resourcesRepository(db: Kysely<Database>) {
  const scoped = (workspace: string, kind: string, parent: string) =>
    db
      .selectFrom('resources')
      .where('workspace', '=', workspace)
      .where('kind', '=', kind)
      .where('parent', '=', parent);

  return {
    async create<Spec>(row: NewResource<Spec>): Promise<ResourceRow<Spec>> {
      await uniquely(() =>
        db
          .insertInto('resources')
          .values({
            id: row.id,
            workspace: row.workspace,
            kind: row.kind,
            parent: row.parent,
            name: row.name,
            display_name: row.displayName,
            external_id: row.externalId,
            labels: JSON.stringify(row.labels),
            spec: JSON.stringify(row.spec),
            status: row.status,
            state: row.state,
            system: JSON.stringify(row.system),
            events: JSON.stringify(row.events.slice(-MAX_EVENTS)),
            revision: 1,
            created_at: row.createdAt,
            updated_at: row.updatedAt,
            created_by: row.createdBy,
            updated_by: row.updatedBy,
            terminated_at: row.terminatedAt,
          })
          .execute(),
      );
      return { ...row, revision: 1 };
    },

    async get<Spec = unknown>(
      workspace: string,
      kind: string,
      name: string,
      parent = '',
    ): Promise<ResourceRow<Spec> | undefined> {
      const r = await scoped(workspace, kind, parent).selectAll().where('name', '=', name).executeTakeFirst();
      return r && fromRow<Spec>(r);
    },

    async getById<Spec = unknown>(id: string): Promise<ResourceRow<Spec> | undefined> {
      const r = await db.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirst();
      return r && fromRow<Spec>(r);
    },

    async getByExternalId<Spec = unknown>(
      workspace: string,
      kind: string,
      externalId: string,
    ): Promise<ResourceRow<Spec> | undefined> {
      const r = await db
        .selectFrom('resources')
        .selectAll()
        .where('workspace', '=', workspace)
        .where('kind', '=', kind)
        .where('external_id', '=', externalId)
        .where('terminated_at', 'is', null)
        .executeTakeFirst();
      return r && fromRow<Spec>(r);
    },

    /** One keyset page; `total` counts every resource of the kind in the workspace, ignoring filters. */
    async list<Spec = unknown>(
      workspace: string,
      kind: string,
      page: ListPage,
      filter: ResourceFilter = {},
    ): Promise<Page<ResourceRow<Spec>>> {
      const parent = filter.parent ?? '';
      // Kept by triggers (migration 003): counting 100k rows per page cost more than the page.
      const total = (await db
        .selectFrom('resource_counts')
        .select('n')
        .where('workspace', '=', workspace)
        .where('kind', '=', kind)
        .where('parent', '=', parent)
        .executeTakeFirst()) ?? { n: 0 };
      let query = scoped(workspace, kind, parent).selectAll();
      if (!filter.includeTerminated) query = query.where('terminated_at', 'is', null);
      if (filter.status && filter.status.length > 0) query = query.where('status', 'in', filter.status);
      if (filter.externalId !== undefined) query = query.where('external_id', '=', filter.externalId);
      return keysetPage(query, page, {
        columns: { createdAt: 'created_at', name: 'name', id: 'id' },
        search: ['name', "coalesce(display_name, '')", 'labels'],
        total: Number(total.n),
        map: (r) => fromRow<Spec>(r),
      });
    },

    /** Every resource of a kind across workspaces (controllers reconciling after a restart). */
    async listByKind<Spec = unknown>(
      kind: string,
      filter: ResourceFilter = {},
    ): Promise<ResourceRow<Spec>[]> {
      let query = db.selectFrom('resources').selectAll().where('kind', '=', kind);
      if (!filter.includeTerminated) query = query.where('terminated_at', 'is', null);
      if (filter.status && filter.status.length > 0) query = query.where('status', 'in', filter.status);
      const rows = await query.orderBy('created_at').orderBy('id').execute();
      return rows.map((r) => fromRow<Spec>(r));
    },

    /** Applies the patch and bumps the revision; with `expectedRevision`, only if nobody wrote since. */
    async update<Spec = unknown>(
      id: string,
      patch: ResourcePatch,
      expectedRevision?: number,
    ): Promise<ResourceRow<Spec>> {
      let query = db
        .updateTable('resources')
        .set((eb) => ({ ...toColumns(patch), revision: eb('revision', '+', 1) }))
        .where('id', '=', id);
      if (expectedRevision !== undefined) query = query.where('revision', '=', expectedRevision);
      const result = await uniquely(() => query.executeTakeFirst());
      if (Number(result.numUpdatedRows) === 0) throw new StaleRevisionError(`resource ${id}`);
      const row = await this.getById<Spec>(id);
      if (!row) throw new StaleRevisionError(`resource ${id}`);
      return row;
    },

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('resources').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Deletes every resource of a kind under one parent (a deleted job's executions), terminated
     * ones included; answers the ids it removed so their files can go too.
     */
    async deleteChildren(workspace: string, kind: string, parent: string): Promise<string[]> {
      const rows = await scoped(workspace, kind, parent).select('id').execute();
      const ids = rows.map((r) => r.id);
      for (let i = 0; i < ids.length; i += 500) {
        await db
          .deleteFrom('resources')
          .where('id', 'in', ids.slice(i, i + 500))
          .execute();
      }
      return ids;
    },

    /** Deletes terminated resources of a kind whose retention ended before `before`. */
    async purgeTerminated(kind: string, before: string): Promise<number> {
      const result = await db
        .deleteFrom('resources')
        .where('kind', '=', kind)
        .where('terminated_at', 'is not', null)
        .where('terminated_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
