import {
  GROUP_BY_DIMENSIONS,
  type AccountMetricsQuery,
  type AccountMetricsResponse,
  type MetricsWindowQuery,
} from '@tarmac/contract';
import { ApiError, CursorCodec, forbidden, notFound, type Principal } from '@tarmac/server-kit';
import type { Repositories } from '@tarmac/store';
import { groupColumnsOf, type MetricsQueryEngine, type MetricsScope } from '../query-engine.js';

/**
 * The billing metrics API (spec "Billing metrics API", "Authentication" 5): the account must be the
 * caller's (another account is a 404, never a leak); account admins see every workspace and may
 * filter or group by workspace; other callers see only their workspaces, and a `workspace=` filter
 * or a workspace grouping is a 403.
 */
export class BillingService {
  constructor(
    private readonly store: Pick<Repositories, 'accounts' | 'memberships'>,
    private readonly engine: MetricsQueryEngine,
    private readonly cursors: CursorCodec,
  ) {}

  async metrics(
    principal: Principal,
    accountId: string,
    query: AccountMetricsQuery,
  ): Promise<AccountMetricsResponse> {
    const wantsWorkspace = query.workspace !== undefined || (query.groupBy ?? []).includes('workspace');
    const scope = await this.scope(principal, accountId, wantsWorkspace);
    const { cursor, limit: _limit, ...bound } = query;
    const binding = CursorCodec.binding({
      op: 'getAccountMetrics',
      accountId,
      principal: principal.id,
      ...bound,
    });
    const after = cursor
      ? this.afterKey(cursor, binding, groupColumnsOf(query.groupBy ?? []).length)
      : undefined;
    const page = await this.engine.query(query, scope, after);
    return {
      ...page.response,
      meta: {
        hasMore: page.hasMore,
        nextCursor:
          page.hasMore && page.lastKey
            ? this.cursors.encode({ key: JSON.stringify(page.lastKey), id: '' }, binding)
            : '',
      },
    };
  }

  async groupByValues(principal: Principal, accountId: string) {
    await this.scope(principal, accountId, false);
    return { values: [...GROUP_BY_DIMENSIONS] };
  }

  async resourceTypes(principal: Principal, accountId: string, query: MetricsWindowQuery) {
    const scope = await this.scope(principal, accountId, false);
    return { values: await this.engine.resourceTypes(query.startTime, query.endTime, scope) };
  }

  private async scope(
    principal: Principal,
    accountId: string,
    wantsWorkspace: boolean,
  ): Promise<MetricsScope> {
    if (principal.accountId !== accountId) throw notFound(`Account "${accountId}"`);
    const isAdmin = await this.store.accounts.isAdmin(accountId, principal.id);
    if (isAdmin) return { accountId, workspaces: undefined };
    if (wantsWorkspace) {
      throw forbidden(
        'Access denied: the workspace filter and grouping by workspace need the account admin role',
      );
    }
    const memberships = await this.store.memberships.listForPrincipal(principal.id);
    return {
      accountId,
      workspaces: memberships.filter((m) => m.accountId === accountId).map((m) => m.workspace),
    };
  }

  private afterKey(cursor: string, binding: string, width: number): string[] {
    const position = this.cursors.decode(cursor, binding);
    const key: unknown = JSON.parse(position.key);
    if (!Array.isArray(key) || key.length !== width || !key.every((k) => typeof k === 'string')) {
      throw new ApiError('invalid_cursor', 'query.cursor: not a cursor of this grouping', {
        details: [{ field: 'query.cursor', message: 'not a cursor of this grouping' }],
      });
    }
    return key as string[];
  }
}
