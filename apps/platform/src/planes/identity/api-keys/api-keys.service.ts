import type { Revoked } from '../../../framework/revocations.js';
import { parseDurationSeconds, type ApiKey } from '@tarmac/contract';
import { invalidField, notFound, type PageRequest, type PageResult } from '@tarmac/server-kit';
import type { ApiKeyRow, Repositories } from '@tarmac/store';
import { PREFIX, hashSecret, newCredential } from '../../../framework/credentials.js';

/** Longest allowed `expires_in` (reference §1.14). */
const MAX_EXPIRY_SECONDS = 10 * 365 * 86_400;

export interface KeyOwner {
  id: string;
  kind: 'user' | 'service_account';
}

export function toApiKey(row: ApiKeyRow, owner: KeyOwner, expiresIn: string | null = null): ApiKey {
  return {
    id: row.id,
    name: row.name,
    expires_in: expiresIn,
    expiresAt: row.expiresAt,
    sub: owner.id,
    sub_type: owner.kind,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** API keys of users and service accounts: random, shown once, stored hashed, optional expiry. */
export class ApiKeysService {
  constructor(
    private readonly store: Pick<Repositories, 'apiKeys'>,
    private readonly now: () => Date,
    /** Told after a key is deleted, so the sandbox plane drops it at once (issue 19 item 10). */
    private readonly revoked: Revoked = () => undefined,
  ) {}

  async create(owner: KeyOwner, input: { name: string; expires_in?: string | undefined }): Promise<ApiKey> {
    let expiresAt: string | null = null;
    if (input.expires_in !== undefined) {
      const seconds = parseDurationSeconds(input.expires_in);
      if (seconds === undefined || seconds <= 0)
        throw invalidField('body.expires_in', 'must be a positive duration');
      if (seconds > MAX_EXPIRY_SECONDS) throw invalidField('body.expires_in', 'must be at most 10y');
      expiresAt = new Date(this.now().getTime() + seconds * 1000).toISOString();
    }
    const credential = newCredential(PREFIX.apiKey);
    const at = this.now().toISOString();
    const row = await this.store.apiKeys.create({
      id: credential.id,
      principalId: owner.id,
      name: input.name,
      secretHash: hashSecret(credential.secret),
      expiresAt,
      createdAt: at,
      updatedAt: at,
    });
    return { ...toApiKey(row, owner, input.expires_in ?? null), apiKey: credential.value };
  }

  async list(owner: KeyOwner, page: PageRequest): Promise<PageResult<ApiKey>> {
    const result = await this.store.apiKeys.listForPrincipal(owner.id, page);
    return { ...result, items: result.items.map((row) => toApiKey(row, owner)) };
  }

  async delete(owner: KeyOwner, keyId: string): Promise<ApiKey> {
    const row = await this.store.apiKeys.get(keyId);
    if (!row || row.principalId !== owner.id) throw notFound(`API key "${keyId}"`);
    await this.store.apiKeys.delete(keyId, owner.id);
    this.revoked({ principalId: owner.id });
    return toApiKey(row, owner);
  }
}
