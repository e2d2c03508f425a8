import { HEADERS } from '@tarmac/contract';
import type { Context } from 'hono';
import type { Principal, ServerEnv, WorkspaceAccess } from './context.js';
import { forbidden, unauthorized } from './errors.js';
import { readHeader } from './headers.js';

/** Establishes who holds a bearer token: an API key or a platform JWT. `undefined` = not valid. */
export interface Authenticator {
  /** `workspace`: the workspace the request names, if any, which it may resolve at once (`Principal.named`). */
  authenticate(token: string, workspace?: string): Promise<Principal | undefined>;
}

/** Decides which workspace a request acts on and the caller's role there. */
export interface WorkspaceResolver {
  /** `requested` is the `workspace` query parameter or header; undefined when the caller named none. */
  resolve(principal: Principal, requested: string | undefined): Promise<WorkspaceAccess>;
}

/** Bearer value from `Authorization`, `X-Service-Authorization` or `X-Blaxel-Authorization`. */
export function bearerToken(c: Context): string | undefined {
  const header = readHeader(c, HEADERS.authorization);
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match) return match[1];
  if (/^Basic\s/i.test(header)) return undefined; // Basic is only for the token endpoint
  return /^\S+$/.test(header) ? header : undefined;
}

export async function requirePrincipal(
  c: Context<ServerEnv>,
  authenticator: Authenticator,
  workspace?: string,
): Promise<Principal> {
  const token = bearerToken(c);
  if (!token) {
    throw unauthorized('Missing bearer token: send "Authorization: Bearer <API key or JWT>"');
  }
  const principal = await authenticator.authenticate(token, workspace);
  if (!principal) throw unauthorized('Invalid, expired or revoked credentials');
  c.set('principal', principal);
  return principal;
}

/** The workspace a request names: `workspace=` or `X-Service-Workspace` (spec "Authentication" 3). */
export function requestedWorkspace(c: Context): string | undefined {
  // A `{workspace}` path parameter (the base-URL routes, e.g. `/{ws}/jobs/{job}/executions`) names it.
  return c.req.param('workspace') || c.req.query('workspace') || readHeader(c, HEADERS.workspace);
}

export async function requireWorkspace(
  c: Context<ServerEnv>,
  principal: Principal,
  resolver: WorkspaceResolver,
  role: 'admin' | undefined,
): Promise<WorkspaceAccess> {
  const access = await resolver.resolve(principal, requestedWorkspace(c));
  c.set('workspace', access);
  if (role === 'admin' && access.role !== 'admin') {
    throw forbidden(`This needs the admin role in workspace "${access.name}"`);
  }
  return access;
}

/**
 * HTTP Basic credentials (RFC 7617), used by the token endpoint for client id and secret. Malformed
 * credentials read as none: the token endpoint then answers `invalid_client`, and other public
 * routes (health, JWKS) are not affected by a stray header.
 */
export function basicCredentials(c: Context): { user: string; password: string } | undefined {
  const header = c.req.header('authorization');
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      user: decodeURIComponent(decoded.slice(0, colon)),
      password: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined; // bad percent-encoding (URIError)
  }
}
