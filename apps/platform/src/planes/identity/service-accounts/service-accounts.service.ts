import type { Revoked } from '../../../framework/revocations.js';
import type { z } from 'zod';
import type { serviceAccountSchema, serviceAccountWithSecretSchema } from '@tarmac/contract';
import { notFound, type PageRequest, type PageResult, type WorkspaceAccess } from '@tarmac/server-kit';
import type { PrincipalRow, Store } from '@tarmac/store';
import { PREFIX, hashSecret, randomId, randomSecret } from '../../../framework/credentials.js';

type ServiceAccount = z.infer<typeof serviceAccountSchema>;

export function toServiceAccount(row: PrincipalRow): ServiceAccount {
  return {
    client_id: row.id,
    name: row.name,
    description: row.description ?? '',
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/**
 * Service accounts (reference §1.14): machine identities of one workspace, authenticating with
 * API keys or with client id + secret at `/oauth/token`.
 */
export class ServiceAccountsService {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
    /** Told after a service account (and with it its keys and tokens) is deleted (issue 19 item 10). */
    private readonly revoked: Revoked = () => undefined,
  ) {}

  list(workspace: WorkspaceAccess, page: PageRequest): Promise<PageResult<ServiceAccount>> {
    return this.store.principals
      .listServiceAccounts(workspace.name, page)
      .then((result) => ({ ...result, items: result.items.map(toServiceAccount) }));
  }

  async create(
    workspace: WorkspaceAccess,
    input: { name: string; description?: string | undefined; role: 'admin' | 'member' },
  ): Promise<z.infer<typeof serviceAccountWithSecretSchema>> {
    const id = randomId(PREFIX.serviceAccount);
    const secret = randomSecret();
    const at = this.now().toISOString();
    const row = await this.store.transaction(async (tx) => {
      const created = await tx.principals.create({
        id,
        kind: 'service_account',
        accountId: workspace.accountId,
        email: null,
        name: input.name,
        description: input.description ?? null,
        clientSecretHash: hashSecret(secret),
        createdAt: at,
        updatedAt: at,
      });
      await tx.memberships.upsert(workspace.name, id, input.role);
      return created;
    });
    return { ...toServiceAccount(row), client_secret: secret };
  }

  /** The service account when it belongs to this workspace; a 404 otherwise. */
  async get(workspace: WorkspaceAccess, clientId: string): Promise<PrincipalRow> {
    const row = await this.store.principals.get(clientId);
    const member =
      row?.kind === 'service_account' && (await this.store.memberships.get(workspace.name, clientId));
    if (!row || !member) throw notFound(`Service account "${clientId}"`);
    return row;
  }

  async update(
    workspace: WorkspaceAccess,
    clientId: string,
    input: { name?: string | undefined; description?: string | undefined },
  ): Promise<ServiceAccount> {
    await this.get(workspace, clientId);
    const row = await this.store.principals.update(clientId, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updatedAt: this.now().toISOString(),
    });
    if (!row) throw notFound(`Service account "${clientId}"`);
    return toServiceAccount(row);
  }

  async delete(workspace: WorkspaceAccess, clientId: string): Promise<ServiceAccount> {
    const row = await this.get(workspace, clientId);
    await this.store.principals.delete(clientId); // keys and refresh tokens cascade
    this.revoked({ principalId: clientId });
    return toServiceAccount(row);
  }
}
