import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CredentialsFile } from '../config.js';
import { TarmacConfigError } from '../http/errors.js';

/** `$TARMAC_HOME`, defaulting to `~/.tarmac`. */
export function tarmacHome(env: Record<string, string | undefined>, homedir: string): string {
  return env.TARMAC_HOME || join(homedir, '.tarmac');
}

export function credentialsPath(home: string): string {
  return join(home, 'credentials.json');
}

/** Reads `<home>/credentials.json`; a missing file is `undefined`, a broken one an error. */
export async function readCredentialsFile(home: string): Promise<CredentialsFile | undefined> {
  const path = credentialsPath(home);
  return parseCredentials(path, await readFile(path, 'utf8').catch(missingAsUndefined));
}

export function readCredentialsFileSync(home: string): CredentialsFile | undefined {
  const path = credentialsPath(home);
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    text = missingAsUndefined(error);
  }
  return parseCredentials(path, text);
}

function missingAsUndefined(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

function parseCredentials(path: string, text: string | undefined): CredentialsFile | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as CredentialsFile;
  } catch {
    throw new TarmacConfigError(`${path} is not valid JSON (fix it or run \`tarmac login\` again)`);
  }
}

/** Writes the file with mode 0600: it holds a secret. */
export async function writeCredentialsFile(home: string, credentials: CredentialsFile): Promise<string> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const path = credentialsPath(home);
  await writeFile(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}
