import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { JWT_ALG, type SigningKey } from './jwt.js';

/** Claims of a drive access token: who may reach which drive (reference §1.8 `access-token`). */
export interface DriveTokenClaims {
  workspace: string;
  drive: string;
  subject: string;
}
export type DriveTokenSigner = (claims: DriveTokenClaims, ttlSeconds: number) => Promise<string>;

/** Audience of drive tokens: distinct from API access tokens, so one is never accepted as the other. */
export const DRIVE_TOKEN_AUDIENCE = 'tarmac-drive';

/** Signs drive tokens with the platform key (verifiable against `/.well-known/jwks.json`). */
export function driveTokenSigner(
  key: SigningKey,
  issuer = 'tarmac',
  now: () => number = Date.now,
): DriveTokenSigner {
  return async (claims, ttlSeconds) => {
    const iat = Math.floor(now() / 1000);
    return new SignJWT({ ws: claims.workspace, drive: claims.drive })
      .setProtectedHeader({ alg: JWT_ALG, kid: key.kid, typ: 'JWT' })
      .setSubject(claims.subject)
      .setIssuer(issuer)
      .setAudience(DRIVE_TOKEN_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .setJti(randomUUID())
      .sign(key.privateKey);
  };
}
