import type { CoreEvent } from '@tarmac/contract';
import { conflict, notFound, type ApiError, type PageRequest, type PageResult } from '@tarmac/server-kit';
import {
  StaleRevisionError,
  UniqueViolationError,
  type ResourceFilter,
  type ResourcePatch,
  type ResourceRow,
  type Store,
} from '@tarmac/store';
import { randomUUID } from 'node:crypto';
import type { ChangeFeed } from './change-feed.js';
import { readModifyWrite } from './read-modify-write.js';
import type { HostConfig } from './hosts.js';
import type { SecretBox } from './secrets.js';

/** What every resource service needs (injected by app.ts). */
export interface CollectionDeps {
  store: Store;
  feed: ChangeFeed;
  now: () => Date;
  /** Encrypts secret values at rest (framework/secrets.ts). */
  secrets: SecretBox;
  /** Host-style public URLs of sandboxes and previews. */
  hosts: HostConfig;
  /** Management API base URL, for `metadata.url` of resources without a host of their own. */
  apiUrl: () => string;
}

export interface NewRecord<Spec> {
  /** A record id chosen ahead (the warm pool's: secrets are derived from it); random otherwise. */
  id?: string;
  workspace: string;
  parent?: string;
  name: string;
  actor: string;
  displayName: string | null;
  externalId: string | null;
  labels: Record<string, string>;
  spec: Spec;
  status: string | null;
  state?: string | null;
  system?: Record<string, unknown>;
  event: CoreEvent;
}

/**
 * One kind of the generic `resources` table (ARCHITECTURE.md "Resources and the reconcile loop"):
 * workspace-scoped reads (another workspace's resource is a 404, never a leak), names unique per
 * (workspace, kind, parent) with a 409 on duplicates, every write bumps the revision and appends
 * an event, and every write publishes a ChangeFeed notice so controllers reconcile at once.
 */
export class ResourceCollection<Spec> {
  constructor(
    readonly deps: CollectionDeps,
    /** Kind string stored in the table, e.g. `sandbox`. */
    readonly kind: string,
    /** Noun used in messages, e.g. `Sandbox`. */
    readonly label: string,
  ) {}

  async find(workspace: string, name: string, parent = ''): Promise<ResourceRow<Spec> | undefined> {
    return this.deps.store.resources.get<Spec>(workspace, this.kind, name, parent);
  }

  async get(workspace: string, name: string, parent = ''): Promise<ResourceRow<Spec>> {
    const row = await this.find(workspace, name, parent);
    if (!row) throw notFound(`${this.label} "${name}"`);
    return row;
  }

  async getByExternalId(workspace: string, externalId: string): Promise<ResourceRow<Spec>> {
    const row = await this.deps.store.resources.getByExternalId<Spec>(workspace, this.kind, externalId);
    if (!row) throw notFound(`${this.label} with externalId "${externalId}"`);
    return row;
  }

  async list(
    workspace: string,
    page: PageRequest,
    filter: ResourceFilter = {},
  ): Promise<PageResult<ResourceRow<Spec>>> {
    return this.deps.store.resources.list<Spec>(workspace, this.kind, page, filter);
  }

  /** Inserts a new record; a duplicate name is a 409 naming it. */
  async create(record: NewRecord<Spec>, duplicate?: () => ApiError): Promise<ResourceRow<Spec>> {
    const at = this.deps.now().toISOString();
    try {
      const row = await this.deps.store.resources.create<Spec>({
        id: record.id ?? randomUUID(),
        workspace: record.workspace,
        kind: this.kind,
        parent: record.parent ?? '',
        name: record.name,
        displayName: record.displayName,
        externalId: record.externalId,
        labels: record.labels,
        spec: record.spec,
        status: record.status,
        state: record.state ?? null,
        system: record.system ?? {},
        events: [record.event],
        createdAt: at,
        updatedAt: at,
        createdBy: record.actor,
        updatedBy: record.actor,
        terminatedAt: null,
      });
      this.publish(row);
      return row;
    } catch (err) {
      if (err instanceof UniqueViolationError) {
        throw duplicate?.() ?? conflict(`${this.label} "${record.name}" already exists`);
      }
      throw err;
    }
  }

  /**
   * Applies `patch` only if nobody wrote since `row` was read (controllers write status
   * concurrently); a lost race is a 409 asking the caller to retry rather than a silent overwrite.
   */
  async update(
    row: ResourceRow<Spec>,
    patch: ResourcePatch,
    actor: string,
    event?: CoreEvent,
  ): Promise<ResourceRow<Spec>> {
    try {
      return await this.write(row, patch, actor, event);
    } catch (err) {
      throw this.mapped(row, err);
    }
  }

  /**
   * Read-modify-write of one record that re-reads and re-applies `change` when someone (usually a
   * controller writing status) wrote in between, so a request does not fail only because status
   * moved under it. `change` may throw (validation) or return undefined (nothing to write).
   */
  async mutate(
    workspace: string,
    name: string,
    actor: string,
    change: (row: ResourceRow<Spec>) => Promise<{ patch: ResourcePatch; event?: CoreEvent } | undefined>,
    parent = '',
  ): Promise<ResourceRow<Spec>> {
    let last: ResourceRow<Spec> | undefined;
    try {
      const written = await readModifyWrite({
        read: async () => (last = await this.get(workspace, name, parent)),
        change,
        write: (row, next) => this.write(row, next.patch, actor, next.event),
        attempts: 5,
      });
      return written!; // `get` throws the 404, so a row was read
    } catch (err) {
      throw last ? this.mapped(last, err) : err;
    }
  }

  private async write(row: ResourceRow<Spec>, patch: ResourcePatch, actor: string, event?: CoreEvent) {
    const updated = await this.deps.store.resources.update<Spec>(
      row.id,
      {
        ...patch,
        ...(event ? { events: [...(patch.events ?? row.events), event] } : {}),
        updatedAt: this.deps.now().toISOString(),
        updatedBy: actor,
      },
      row.revision,
    );
    this.publish(updated);
    return updated;
  }

  private mapped(row: ResourceRow<Spec>, err: unknown): unknown {
    if (err instanceof StaleRevisionError) {
      return conflict(`${this.label} "${row.name}" was changed concurrently; read it again and retry`);
    }
    if (err instanceof UniqueViolationError) return conflict(`${this.label} "${row.name}": duplicate value`);
    return err;
  }

  /** Removes the record for good (kinds without a terminated phase, e.g. previews). */
  async remove(row: ResourceRow<Spec>): Promise<void> {
    await this.deps.store.resources.delete(row.id);
    this.publish(row);
  }

  publish(row: Pick<ResourceRow, 'workspace' | 'name' | 'parent'>): void {
    this.deps.feed.publish({
      workspace: row.workspace,
      kind: this.kind,
      name: row.parent ? `${row.parent}/${row.name}` : row.name,
    });
  }
}

/** A list filter from the shared list query (`status` overrides `showTerminated`: reference §1.6). */
export function listFilter(query: {
  status?: string[] | undefined;
  showTerminated?: boolean | undefined;
  externalId?: string | undefined;
}): ResourceFilter {
  return {
    ...(query.status ? { status: query.status, includeTerminated: true } : {}),
    ...(!query.status && query.showTerminated ? { includeTerminated: true } : {}),
    ...(query.externalId !== undefined ? { externalId: query.externalId } : {}),
  };
}

/** Maps a page of rows to response items. */
export function mapPage<R, T>(page: PageResult<R>, map: (row: R) => T): PageResult<T> {
  return { ...page, items: page.items.map(map) };
}
