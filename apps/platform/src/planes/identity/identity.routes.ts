import { coreRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { AccountsService } from './accounts/accounts.service.js';
import type { ApiKeysService } from './api-keys/api-keys.service.js';
import type { OAuthService } from './oauth/oauth.service.js';
import type { ServiceAccountsService } from './service-accounts/service-accounts.service.js';
import type { UsersService } from './users/users.service.js';
import type { WorkspacesService } from './workspaces/workspaces.service.js';
import type { JwtService } from './auth/jwt.js';

export interface IdentityServices {
  jwt: JwtService;
  oauth: OAuthService;
  accounts: AccountsService;
  workspaces: WorkspacesService;
  users: UsersService;
  serviceAccounts: ServiceAccountsService;
  apiKeys: ApiKeysService;
}

/** Routes of identity and access: parse (done by the runner), call a service, return its shape. */
export function registerIdentityRoutes(app: Hono<ServerEnv>, deps: RouteDeps, s: IdentityServices): void {
  const r = coreRoutes;
  mountRoute(app, deps, r.jwks, async () => s.jwt.jwks());
  mountRoute(app, deps, r.issueToken, async ({ body, ctx }) => s.oauth.token(body, ctx.basicAuth));
  mountRoute(app, deps, r.acceptInvitation, async ({ body }) => s.users.accept(body));
  mountRoute(app, deps, r.listAccounts, async ({ ctx }) => s.accounts.list(principalOf(ctx)));

  mountRoute(app, deps, r.listWorkspaces, async ({ ctx, page }) => s.workspaces.list(principalOf(ctx), page));
  mountRoute(app, deps, r.createWorkspace, async ({ ctx, body }) =>
    s.workspaces.create(principalOf(ctx), body),
  );
  mountRoute(app, deps, r.getWorkspace, async ({ ctx, params }) =>
    s.workspaces.get(principalOf(ctx), params.name),
  );
  mountRoute(app, deps, r.updateWorkspace, async ({ ctx, params, body }) =>
    s.workspaces.update(principalOf(ctx), params.name, body),
  );
  mountRoute(app, deps, r.deleteWorkspace, async ({ ctx, params }) =>
    s.workspaces.delete(principalOf(ctx), params.name),
  );

  mountRoute(app, deps, r.listUsers, async ({ ctx, page }) => s.users.list(workspaceOf(ctx), page));
  mountRoute(app, deps, r.inviteUser, async ({ ctx, body }) =>
    s.users.invite(workspaceOf(ctx), principalOf(ctx), body),
  );
  mountRoute(app, deps, r.updateUser, async ({ ctx, params, body }) =>
    s.users.updateRole(workspaceOf(ctx), params.subOrEmail, body.role),
  );
  mountRoute(app, deps, r.removeUser, async ({ ctx, params }) =>
    s.users.remove(workspaceOf(ctx), params.subOrEmail),
  );

  mountRoute(app, deps, r.listServiceAccounts, async ({ ctx, page }) =>
    s.serviceAccounts.list(workspaceOf(ctx), page),
  );
  mountRoute(app, deps, r.createServiceAccount, async ({ ctx, body }) =>
    s.serviceAccounts.create(workspaceOf(ctx), body),
  );
  mountRoute(app, deps, r.updateServiceAccount, async ({ ctx, params, body }) =>
    s.serviceAccounts.update(workspaceOf(ctx), params.clientId, body),
  );
  mountRoute(app, deps, r.deleteServiceAccount, async ({ ctx, params }) =>
    s.serviceAccounts.delete(workspaceOf(ctx), params.clientId),
  );
  const serviceAccount = async (ctx: Parameters<typeof workspaceOf>[0], clientId: string) => {
    const row = await s.serviceAccounts.get(workspaceOf(ctx), clientId);
    return { id: row.id, kind: 'service_account' as const };
  };
  mountRoute(app, deps, r.listServiceAccountApiKeys, async ({ ctx, params, page }) =>
    s.apiKeys.list(await serviceAccount(ctx, params.clientId), page),
  );
  mountRoute(app, deps, r.createServiceAccountApiKey, async ({ ctx, params, body }) =>
    s.apiKeys.create(await serviceAccount(ctx, params.clientId), body),
  );
  mountRoute(app, deps, r.deleteServiceAccountApiKey, async ({ ctx, params }) =>
    s.apiKeys.delete(await serviceAccount(ctx, params.clientId), params.apiKeyId),
  );

  const self = (ctx: Parameters<typeof principalOf>[0]) => {
    const principal = principalOf(ctx);
    return { id: principal.id, kind: principal.kind };
  };
  mountRoute(app, deps, r.listOwnApiKeys, async ({ ctx, page }) => s.apiKeys.list(self(ctx), page));
  mountRoute(app, deps, r.createOwnApiKey, async ({ ctx, body }) => s.apiKeys.create(self(ctx), body));
  mountRoute(app, deps, r.deleteOwnApiKey, async ({ ctx, params }) =>
    s.apiKeys.delete(self(ctx), params.apiKeyId),
  );
}
