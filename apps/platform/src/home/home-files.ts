import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { generateSigningJwk } from '../planes/identity/auth/jwt.js';

/**
 * Files under `TARMAC_HOME` (ARCHITECTURE.md: `tarmac.db`, `keys/`, ...). Only main.ts calls these;
 * they are here so main.ts stays a short list of steps. Secrets are written 0600 in 0700 folders,
 * atomically (write then rename), so a crash never leaves half a key.
 */
export interface HomeLayout {
  root: string;
  keys: string;
  database: string;
  credentials: string;
}

export function homeLayout(root: string): HomeLayout {
  return {
    root,
    keys: join(root, 'keys'),
    database: join(root, 'tarmac.db'),
    credentials: join(root, 'credentials.json'),
  };
}

export async function ensureHome(layout: HomeLayout): Promise<void> {
  await mkdir(layout.root, { recursive: true, mode: 0o700 });
  await mkdir(layout.keys, { recursive: true, mode: 0o700 });
  await chmod(layout.keys, 0o700);
}

async function writeSecretFile(path: string, content: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
  await chmod(path, 0o600);
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The ES256 key that signs JWTs; created on first start. */
export async function loadOrCreateSigningJwk(layout: HomeLayout): Promise<JWK> {
  const path = join(layout.keys, 'jwt-signing.jwk.json');
  const existing = await readIfExists(path);
  if (existing) return JSON.parse(existing.toString('utf8')) as JWK;
  const jwk = await generateSigningJwk();
  await writeSecretFile(path, JSON.stringify(jwk));
  return jwk;
}

/** A 256-bit secret key named `name` under keys/ (cursor signing, and later secret encryption). */
export async function loadOrCreateSecretKey(layout: HomeLayout, name: string): Promise<Uint8Array> {
  const path = join(layout.keys, name);
  const existing = await readIfExists(path);
  if (existing && existing.length >= 32) return new Uint8Array(existing);
  const key = randomBytes(32);
  await writeSecretFile(path, key);
  return new Uint8Array(key);
}

export interface CredentialsFile {
  apiUrl: string;
  runUrl: string;
  workspace: string;
  accountId: string;
  apiKey: string;
}

export async function readCredentials(layout: HomeLayout): Promise<CredentialsFile | undefined> {
  const raw = await readIfExists(layout.credentials);
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as Partial<CredentialsFile>;
    return typeof parsed.apiKey === 'string' ? (parsed as CredentialsFile) : undefined;
  } catch {
    return undefined;
  }
}

export async function writeCredentials(layout: HomeLayout, credentials: CredentialsFile): Promise<void> {
  await writeSecretFile(layout.credentials, `${JSON.stringify(credentials, null, 2)}\n`);
}
