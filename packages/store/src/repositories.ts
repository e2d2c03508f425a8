import type { Kysely } from 'kysely';
import { accountsRepository } from './repositories/accounts.js';
import { apiKeysRepository } from './repositories/api-keys.js';
import { invitationsRepository } from './repositories/invitations.js';
import { membershipsRepository } from './repositories/memberships.js';
import { meteringRepository } from './repositories/metering.js';
import { modelCallsRepository } from './repositories/model-calls.js';
import { principalsRepository } from './repositories/principals.js';
import { refreshTokensRepository } from './repositories/refresh-tokens.js';
import { resourcesRepository } from './repositories/resources.js';
import { workspacesRepository } from './repositories/workspaces.js';
import type { Database } from './schema.js';

/** One repository module per aggregate, all over the same connection or transaction. */
export function repositories(db: Kysely<Database>) {
  return {
    accounts: accountsRepository(db),
    principals: principalsRepository(db),
    workspaces: workspacesRepository(db),
    memberships: membershipsRepository(db),
    apiKeys: apiKeysRepository(db),
    refreshTokens: refreshTokensRepository(db),
    invitations: invitationsRepository(db),
    resources: resourcesRepository(db),
    metering: meteringRepository(db),
    modelCalls: modelCallsRepository(db),
  };
}

export type Repositories = ReturnType<typeof repositories>;
