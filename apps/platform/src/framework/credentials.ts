import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Credentials the platform hands out: high-entropy random secrets, shown once and stored as SHA-256
 * digests (a slow password hash buys nothing for 256-bit random values and would cost every request).
 * A credential is `<id>.<secret>`: the id (with a visible kind prefix such as `ak_`) finds the row,
 * the secret proves possession.
 */
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(prefix: string, length = 16): string {
  const bytes = randomBytes(length);
  let id = '';
  for (const byte of bytes) id += ID_ALPHABET[byte % ID_ALPHABET.length];
  return `${prefix}${id}`;
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export interface Credential {
  id: string;
  secret: string;
  /** What the holder presents: `<id>.<secret>`. */
  value: string;
}

export function newCredential(prefix: string): Credential {
  const id = randomId(prefix);
  const secret = randomSecret();
  return { id, secret, value: `${id}.${secret}` };
}

/** Splits `<id>.<secret>` when the id carries the expected prefix. */
export function parseCredential(value: string, prefix: string): { id: string; secret: string } | undefined {
  if (!value.startsWith(prefix)) return undefined;
  const dot = value.indexOf('.');
  if (dot <= prefix.length || dot === value.length - 1 || value.indexOf('.', dot + 1) !== -1)
    return undefined;
  return { id: value.slice(0, dot), secret: value.slice(dot + 1) };
}

export const PREFIX = {
  apiKey: 'ak_',
  refreshToken: 'rt_',
  user: 'usr_',
  serviceAccount: 'sa_',
  account: 'acc_',
  invitation: 'inv_',
} as const;
