import {
  SignJWT,
  calculateJwkThumbprint,
  exportJWK,
  importJWK,
  jwtVerify,
  type JWK,
  type CryptoKey,
} from 'jose';
import { randomUUID } from 'node:crypto';

/** The platform's JWT signing key (ES256), kept under `TARMAC_HOME/keys` and published at JWKS. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export const JWT_ALG = 'ES256';
export const JWT_AUDIENCE = 'tarmac';

export async function signingKeyFromJwk(privateJwk: JWK): Promise<SigningKey> {
  const privateKey = (await importJWK(privateJwk, JWT_ALG)) as CryptoKey;
  const { d: _d, ...publicPart } = privateJwk;
  const kid = privateJwk.kid ?? (await calculateJwkThumbprint(publicPart));
  return { kid, privateKey, publicJwk: { ...publicPart, kid, alg: JWT_ALG, use: 'sig' } };
}

export async function generateSigningJwk(): Promise<JWK> {
  const { generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair(JWT_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const { d: _d, ...publicPart } = jwk;
  return { ...jwk, kid: await calculateJwkThumbprint(publicPart), alg: JWT_ALG };
}

export interface AccessClaims {
  sub: string;
  kind: 'user' | 'service_account';
  accountId: string;
  exp: number;
}

/** Issues and verifies short-lived access tokens. Verified tokens are cached until they expire. */
export class JwtService {
  private readonly verified = new Map<string, AccessClaims>();
  private verificationKey: Promise<CryptoKey> | undefined;

  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly now: () => number = Date.now,
    private readonly cacheSize = 10_000,
  ) {}

  jwks(): { keys: JWK[] } {
    return { keys: [this.key.publicJwk] };
  }

  async issue(subject: { id: string; kind: AccessClaims['kind']; accountId: string }, ttlSeconds: number) {
    const iat = Math.floor(this.now() / 1000);
    const token = await new SignJWT({ kind: subject.kind, acc: subject.accountId })
      .setProtectedHeader({ alg: JWT_ALG, kid: this.key.kid, typ: 'at+jwt' })
      .setSubject(subject.id)
      .setIssuer(this.issuer)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .setJti(randomUUID())
      .sign(this.key.privateKey);
    return { token, expiresIn: ttlSeconds };
  }

  /** The token's claims when it is ours, untampered and unexpired; otherwise undefined. */
  async verify(token: string): Promise<AccessClaims | undefined> {
    const nowSeconds = this.now() / 1000;
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > nowSeconds) return cached;
      this.verified.delete(token);
      return undefined;
    }
    try {
      this.verificationKey ??= importJWK(this.key.publicJwk, JWT_ALG) as Promise<CryptoKey>;
      const { payload } = await jwtVerify(token, await this.verificationKey, {
        issuer: this.issuer,
        audience: JWT_AUDIENCE,
        algorithms: [JWT_ALG],
        currentDate: new Date(this.now()),
      });
      const kind = payload.kind;
      if (
        typeof payload.sub !== 'string' ||
        typeof payload.acc !== 'string' ||
        typeof payload.exp !== 'number'
      ) {
        return undefined;
      }
      if (kind !== 'user' && kind !== 'service_account') return undefined;
      const claims: AccessClaims = { sub: payload.sub, kind, accountId: payload.acc, exp: payload.exp };
      if (this.verified.size >= this.cacheSize) this.verified.clear();
      this.verified.set(token, claims);
      return claims;
    } catch {
      return undefined;
    }
  }
}
