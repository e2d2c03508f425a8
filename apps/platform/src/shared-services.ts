import type { Store } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ChangeFeed } from './framework/change-feed.js';
import { SecretBox } from './framework/secrets.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from './planes/identity/auth/authenticator.js';
import { JwtService, type SigningKey } from './planes/identity/auth/jwt.js';

/**
 * The services every plane shares, built once per process by the composition root (issue 13): the
 * change feed controllers and services publish to, the box sealing secrets at rest, the JWT
 * service, and the bearer authenticator and workspace resolver of the management API and the
 * gateways. Planes receive them as arguments and never build their own.
 */
export interface SharedServices {
  changeFeed: ChangeFeed;
  secrets: SecretBox;
  jwt: JwtService;
  authenticator: BearerAuthenticator;
  workspaces: MembershipWorkspaceResolver;
}

export interface SharedServiceDeps {
  store: Store;
  signingKey: SigningKey;
  /** 256-bit key sealing secret values at rest (`TARMAC_HOME/keys/secrets.key`); random if absent (tests). */
  secretKey?: Uint8Array | undefined;
  /** An existing feed to share (tests hand one to controllers they run themselves). */
  changeFeed?: ChangeFeed | undefined;
  now?: (() => number) | undefined;
}

export function sharedServices(deps: SharedServiceDeps): SharedServices {
  const nowMs = deps.now ?? Date.now;
  const jwt = new JwtService(deps.signingKey, 'tarmac', nowMs);
  return {
    changeFeed: deps.changeFeed ?? new ChangeFeed(),
    secrets: new SecretBox(deps.secretKey ?? randomBytes(32)),
    jwt,
    authenticator: new BearerAuthenticator(deps.store, jwt, nowMs),
    workspaces: new MembershipWorkspaceResolver(deps.store),
  };
}
