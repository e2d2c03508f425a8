import type { ApiVersion } from '@tarmac/contract';
import type { Logger } from 'pino';

/** Who is calling, as established by an `Authenticator` (API key or JWT). */
export interface Principal {
  readonly id: string;
  readonly kind: 'user' | 'service_account';
  readonly accountId: string;
  /** How the caller proved who it is. */
  readonly via: 'api_key' | 'jwt';
  /** When the credential stops being valid (epoch ms), if it expires: caches must not outlive it. */
  readonly expiresAtMs?: number;
  /**
   * The workspace the request names, when the authenticator resolved the caller's access to it in
   * the same lookup as the credential (one query instead of two; bench/api-overhead.ts). `access`
   * undefined: the caller cannot see it. Per request: nothing about a key is cached.
   */
  readonly named?: { readonly workspace: string; readonly access: WorkspaceAccess | undefined };
}

/** The workspace a request acts on, and the caller's role there. */
export interface WorkspaceAccess {
  readonly name: string;
  readonly accountId: string;
  readonly role: 'admin' | 'member';
}

/** Hono variables every server of ours sets. */
export interface ServerEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    apiVersion: ApiVersion;
    principal: Principal | undefined;
    workspace: WorkspaceAccess | undefined;
    /** The matched route's path template, for logs. */
    routePath: string | undefined;
  };
}

/** What a route handler receives beyond its parsed input. */
export interface RequestContext {
  readonly requestId: string;
  readonly logger: Logger;
  readonly apiVersion: ApiVersion;
  readonly principal: Principal | undefined;
  readonly workspace: WorkspaceAccess | undefined;
  readonly headers: Headers;
  /** Basic credentials of the token endpoint, when sent. */
  readonly basicAuth: { user: string; password: string } | undefined;
}

/** The authenticated caller of a non-public route (the runner guarantees it). */
export function principalOf(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new Error('route is public: no principal');
  return ctx.principal;
}

/** The resolved workspace of a `workspace` route (the runner guarantees it). */
export function workspaceOf(ctx: RequestContext): WorkspaceAccess {
  if (!ctx.workspace) throw new Error('route is not workspace-scoped');
  return ctx.workspace;
}
