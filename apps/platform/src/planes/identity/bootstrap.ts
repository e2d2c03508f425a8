import type { Store } from '@tarmac/store';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { PREFIX, randomId } from '../../framework/credentials.js';
import { DEFAULT_WORKSPACE } from '../../framework/default-workspace.js';

/** The identity `tarmac up` creates on first start (issue "Platform core" §2). */
export const BOOTSTRAP_ADMIN_EMAIL = 'admin@localhost';
export { DEFAULT_WORKSPACE };

export interface BootstrapResult {
  firstStart: boolean;
  accountId: string;
  workspace: string;
  adminId: string;
  /** A new admin API key, when one was minted (first start, or the credentials file was lost). */
  apiKey?: string;
}

/**
 * Idempotent: on first start create the account, the `default` workspace and an admin with an API
 * key; later starts find them and change nothing, unless `mintKey` asks for a fresh admin key.
 */
export async function bootstrap(
  store: Store,
  options: { mintKey: boolean; now: () => Date },
): Promise<BootstrapResult> {
  const existing = await store.principals.getUserByEmail(BOOTSTRAP_ADMIN_EMAIL);
  const apiKeys = new ApiKeysService(store, options.now);
  if (existing) {
    const result: BootstrapResult = {
      firstStart: false,
      accountId: existing.accountId,
      workspace: DEFAULT_WORKSPACE,
      adminId: existing.id,
    };
    if (!options.mintKey) return result;
    const key = await apiKeys.create({ id: existing.id, kind: 'user' }, { name: 'tarmac-up' });
    return { ...result, apiKey: key.apiKey };
  }
  const at = options.now().toISOString();
  const accountId = randomId(PREFIX.account);
  const adminId = randomId(PREFIX.user);
  await store.transaction(async (tx) => {
    await tx.accounts.create({ id: accountId, name: 'default', createdAt: at });
    await tx.principals.create({
      id: adminId,
      kind: 'user',
      accountId,
      email: BOOTSTRAP_ADMIN_EMAIL,
      name: 'admin',
      description: null,
      clientSecretHash: null,
      createdAt: at,
      updatedAt: at,
    });
    await tx.accounts.addAdmin(accountId, adminId);
    await tx.workspaces.create({
      name: DEFAULT_WORKSPACE,
      id: crypto.randomUUID(),
      accountId,
      displayName: 'Default',
      labels: {},
      createdAt: at,
      updatedAt: at,
      createdBy: adminId,
      updatedBy: adminId,
    });
    await tx.memberships.upsert(DEFAULT_WORKSPACE, adminId, 'admin');
  });
  const key = await apiKeys.create({ id: adminId, kind: 'user' }, { name: 'tarmac-up' });
  return { firstStart: true, accountId, workspace: DEFAULT_WORKSPACE, adminId, apiKey: key.apiKey };
}
