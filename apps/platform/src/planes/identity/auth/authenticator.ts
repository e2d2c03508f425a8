import {
  ApiError,
  notFound,
  type Authenticator,
  type Principal,
  type WorkspaceAccess,
  type WorkspaceResolver,
} from '@tarmac/server-kit';
import type { Dialect, Repositories, WorkspaceAccessRow } from '@tarmac/store';
import type { JwtService } from './jwt.js';
import { PREFIX, parseCredential, secretMatches } from '../../../framework/credentials.js';

/**
 * Bearer tokens are either API keys (`ak_<id>.<secret>`: one indexed lookup that also yields the
 * owner) or platform JWTs (verified against our key, then the subject must still exist, so deleting a
 * service account cuts its tokens at once).
 */
export class BearerAuthenticator implements Authenticator {
  constructor(
    private readonly store: Pick<Repositories, 'apiKeys' | 'principals'> & { dialect?: Dialect },
    private readonly jwt: JwtService,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(token: string, workspace?: string): Promise<Principal | undefined> {
    const apiKey = parseCredential(token, PREFIX.apiKey);
    if (apiKey) {
      // Naming a workspace on PostgreSQL: the key, its owner and the owner's access there in one
      // query, one round trip fewer (bench/api-overhead.ts: -59 µs CPU, -82 µs wall per request).
      // Not on SQLite: in-process, the larger statement costs more than a second small one (+40 µs).
      const joined = workspace !== undefined && this.store.dialect === 'postgres';
      const withWorkspace = joined
        ? await this.store.apiKeys.getWithWorkspace(apiKey.id, workspace)
        : undefined;
      const row = joined ? withWorkspace : await this.store.apiKeys.get(apiKey.id);
      if (!row || !secretMatches(apiKey.secret, row.secretHash)) return undefined;
      if (row.expiresAt && Date.parse(row.expiresAt) <= this.now()) return undefined;
      const principal: Principal = {
        id: row.principalId,
        kind: row.principalKind,
        accountId: row.accountId,
        via: 'api_key',
        ...(row.expiresAt ? { expiresAtMs: Date.parse(row.expiresAt) } : {}),
      };
      return named(principal, workspace, withWorkspace);
    }
    if (token.split('.').length !== 3) return undefined;
    const claims = await this.jwt.verify(token);
    if (!claims) return undefined;
    // The subject must still exist; naming a workspace on PostgreSQL, its access there comes in the
    // same query (as for API keys above).
    const joined = workspace !== undefined && this.store.dialect === 'postgres';
    const withWorkspace = joined
      ? await this.store.principals.getWithWorkspace(claims.sub, workspace)
      : undefined;
    const found = joined ? withWorkspace : await this.store.principals.get(claims.sub);
    if (!found) return undefined;
    const principal: Principal = {
      id: found.id,
      kind: found.kind,
      accountId: found.accountId,
      via: 'jwt',
      expiresAtMs: claims.exp * 1000,
    };
    return named(principal, workspace, withWorkspace);
  }
}

/** The principal, with its access to the named workspace when the lookup read it. */
function named(
  principal: Principal,
  workspace: string | undefined,
  read: { workspace: WorkspaceAccessRow | undefined } | undefined,
): Principal {
  if (workspace === undefined || !read) return principal;
  return { ...principal, named: { workspace, access: accessOf(workspace, read.workspace) } };
}

/** The rule of `MembershipWorkspaceResolver.named`, over the row `getWithWorkspace` read. */
function accessOf(name: string, found: WorkspaceAccessRow | undefined): WorkspaceAccess | undefined {
  if (!found) return undefined;
  if (found.memberRole) return { name, accountId: found.accountId, role: found.memberRole };
  return found.accountAdmin ? { name, accountId: found.accountId, role: 'admin' } : undefined;
}

/**
 * Spec "Authentication" 3: the workspace comes from `workspace=` or `X-Service-Workspace`; a caller
 * who can see exactly one workspace may omit it. A workspace the caller cannot see is a 404, exactly
 * as if it did not exist. Account admins act as admins of every workspace of their account.
 */
export class MembershipWorkspaceResolver implements WorkspaceResolver {
  constructor(private readonly store: Pick<Repositories, 'memberships' | 'workspaces' | 'accounts'>) {}

  async resolve(principal: Principal, requested: string | undefined): Promise<WorkspaceAccess> {
    if (requested !== undefined) return this.named(principal, requested);
    // Few, cheap queries (this runs on every request that omits the workspace): an account admin sees
    // every workspace of their account (and no other: users never join another account's workspace),
    // so two names of the account answer; anyone else needs only their memberships.
    if (await this.store.accounts.isAdmin(principal.accountId, principal.id)) {
      const names = await this.store.workspaces.namesOfAccount(principal.accountId, 2);
      if (names.length === 1) return { name: names[0]!, accountId: principal.accountId, role: 'admin' };
      if (names.length === 0) throw new ApiError('not_found', 'The caller belongs to no workspace');
    } else {
      const memberships = await this.store.memberships.listForPrincipal(principal.id);
      const only = memberships.length === 1 ? memberships[0]! : undefined;
      if (only) return { name: only.workspace, accountId: only.accountId, role: only.role };
      if (memberships.length === 0) throw new ApiError('not_found', 'The caller belongs to no workspace');
    }
    throw new ApiError(
      'workspace_required',
      'workspace: the caller has several workspaces; name one with the "workspace" query parameter or the X-Service-Workspace header',
      { details: [{ field: 'query.workspace', message: 'is required for callers with several workspaces' }] },
    );
  }

  private async named(principal: Principal, name: string): Promise<WorkspaceAccess> {
    if (principal.named?.workspace === name) {
      if (principal.named.access) return principal.named.access;
      throw notFound(`Workspace "${name}"`);
    }
    const membership = await this.store.memberships.get(name, principal.id);
    if (membership) return { name, accountId: membership.accountId, role: membership.role };
    const workspace = await this.store.workspaces.get(name);
    if (workspace && (await this.store.accounts.isAdmin(workspace.accountId, principal.id))) {
      return { name, accountId: workspace.accountId, role: 'admin' };
    }
    throw notFound(`Workspace "${name}"`);
  }
}
