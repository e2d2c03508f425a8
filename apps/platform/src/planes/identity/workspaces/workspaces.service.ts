import type { Workspace } from '@tarmac/contract';
import {
  conflict,
  forbidden,
  invalidField,
  notFound,
  type PageRequest,
  type PageResult,
  type Principal,
} from '@tarmac/server-kit';
import { UniqueViolationError, type Store, type WorkspaceRow } from '@tarmac/store';
import { RESERVED_WORKSPACE_NAMES } from '../../../framework/reserved-names.js';

export function toWorkspace(row: WorkspaceRow, role: Workspace['role']): Workspace {
  return {
    id: row.id,
    name: row.name,
    displayName: row.displayName ?? row.name,
    labels: row.labels,
    accountId: row.accountId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
    role,
  };
}

/** Workspaces (reference §1.13): visible to members and to their account's admins. */
export class WorkspacesService {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
    /**
     * Told after a workspace is deleted: its records went with it (cascade), so the controllers
     * tear its containers and volumes down and the sandbox plane drops its sessions (issue 19
     * items 8 and 10).
     */
    private readonly deleted: (name: string) => void = () => undefined,
  ) {}

  async list(principal: Principal, page: PageRequest): Promise<PageResult<Workspace>> {
    const result = await this.store.workspaces.listVisible(principal.id, page);
    const roles = await this.rolesOf(principal);
    return { ...result, items: result.items.map((row) => toWorkspace(row, roles(row))) };
  }

  async get(principal: Principal, name: string): Promise<Workspace> {
    const { row, role } = await this.visible(principal, name);
    return toWorkspace(row, role);
  }

  async create(
    principal: Principal,
    input: { name: string; displayName?: string | undefined; labels?: Record<string, string> | undefined },
  ): Promise<Workspace> {
    if (!(await this.store.accounts.isAdmin(principal.accountId, principal.id))) {
      throw forbidden('Only account admins create workspaces');
    }
    if (RESERVED_WORKSPACE_NAMES.has(input.name)) {
      throw invalidField('body.name', `"${input.name}" is reserved by the platform`);
    }
    const at = this.now().toISOString();
    try {
      const row = await this.store.transaction(async (tx) => {
        const created = await tx.workspaces.create({
          name: input.name,
          id: crypto.randomUUID(),
          accountId: principal.accountId,
          displayName: input.displayName ?? null,
          labels: input.labels ?? {},
          createdAt: at,
          updatedAt: at,
          createdBy: principal.id,
          updatedBy: principal.id,
        });
        await tx.memberships.upsert(input.name, principal.id, 'admin');
        return created;
      });
      return toWorkspace(row, 'admin');
    } catch (err) {
      if (err instanceof UniqueViolationError) throw conflict(`Workspace "${input.name}" already exists`);
      throw err;
    }
  }

  async update(
    principal: Principal,
    name: string,
    input: {
      name?: string | undefined;
      displayName?: string | undefined;
      labels?: Record<string, string> | undefined;
    },
  ): Promise<Workspace> {
    if (input.name !== undefined && input.name !== name) {
      throw invalidField('body.name', 'is immutable; it cannot change from "' + name + '"');
    }
    const { role } = await this.visible(principal, name);
    if (role !== 'admin') throw forbidden(`This needs the admin role in workspace "${name}"`);
    const row = await this.store.workspaces.update(name, {
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
      ...(input.labels !== undefined ? { labels: input.labels } : {}),
      updatedBy: principal.id,
      updatedAt: this.now().toISOString(),
    });
    if (!row) throw notFound(`Workspace "${name}"`);
    return toWorkspace(row, role);
  }

  async delete(principal: Principal, name: string): Promise<Workspace> {
    const { row, role } = await this.visible(principal, name);
    if (role !== 'admin') throw forbidden(`This needs the admin role in workspace "${name}"`);
    await this.store.workspaces.delete(name);
    this.deleted(name);
    return toWorkspace(row, role);
  }

  /** The workspace and the caller's role, or a 404 that does not reveal whether it exists. */
  private async visible(
    principal: Principal,
    name: string,
  ): Promise<{ row: WorkspaceRow; role: Workspace['role'] }> {
    const row = await this.store.workspaces.get(name);
    if (!row) throw notFound(`Workspace "${name}"`);
    const membership = await this.store.memberships.get(name, principal.id);
    if (membership) return { row, role: membership.role };
    if (await this.store.accounts.isAdmin(row.accountId, principal.id)) return { row, role: 'admin' };
    throw notFound(`Workspace "${name}"`);
  }

  private async rolesOf(principal: Principal): Promise<(row: WorkspaceRow) => Workspace['role']> {
    const memberships = await this.store.memberships.listForPrincipal(principal.id);
    const byWorkspace = new Map(memberships.map((m) => [m.workspace, m.role]));
    const adminOf = new Set(
      (await this.store.accounts.listForPrincipal(principal.id))
        .filter((account) => account.isAdmin)
        .map((account) => account.id),
    );
    return (row) => (adminOf.has(row.accountId) ? 'admin' : (byWorkspace.get(row.name) ?? 'member'));
  }
}
