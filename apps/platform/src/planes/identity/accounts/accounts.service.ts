import type { Account } from '@tarmac/contract';
import type { PageResult, Principal } from '@tarmac/server-kit';
import type { Repositories } from '@tarmac/store';

/** `GET /v0/accounts`: the caller's accounts. A principal belongs to one account, so one page. */
export class AccountsService {
  constructor(private readonly store: Pick<Repositories, 'accounts'>) {}

  async list(principal: Principal): Promise<PageResult<Account>> {
    const rows = await this.store.accounts.listForPrincipal(principal.id);
    const items = await Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        name: row.name,
        createdAt: row.createdAt,
        isAdmin: await this.store.accounts.isAdmin(row.id, principal.id),
      })),
    );
    return { items, hasMore: false, total: items.length };
  }
}
