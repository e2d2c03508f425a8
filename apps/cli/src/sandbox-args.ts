/** Argument parsing of the sandbox commands, kept pure for tests. */
import { ArgumentError } from './errors.js';

/** `name:/path` is remote, anything else local (`./a:b` and `/x:y` stay local). */
export interface CopyEndpoint {
  sandbox?: string;
  path: string;
}

export function parseCopyEndpoint(text: string): CopyEndpoint {
  const match = /^([a-z0-9][a-z0-9-]*):(.*)$/.exec(text);
  if (!match) return { path: text };
  return { sandbox: match[1], path: match[2] || '.' };
}

export function basename(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() ?? path;
}

/** `KEY=VALUE` options into a map; a missing `=` is a usage error. */
export function parseEnvPairs(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new ArgumentError(`--env expects KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ArgumentError(`invalid port "${text}"`);
  return port;
}

const MEMORY_UNITS_MB: Record<string, number> = {
  '': 1,
  m: 1,
  mb: 1,
  mi: 1,
  mib: 1,
  g: 1024,
  gb: 1024,
  gi: 1024,
  gib: 1024,
};

/**
 * `--memory`: a whole number of MB (`512`), or a size with a unit (`512m`, `2g`, `1.5GiB`; binary
 * units, as the API's memory is in MiB). Anything else is refused, never silently dropped.
 */
export function parseMemory(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const factor = match ? MEMORY_UNITS_MB[(match[2] ?? '').toLowerCase()] : undefined;
  const mb = match && factor !== undefined ? Number(match[1]) * factor : NaN;
  if (!Number.isInteger(mb) || mb <= 0) {
    throw new ArgumentError(`invalid --memory "${text}": give MB (e.g. 2048) or a size such as 512m or 2g`);
  }
  return mb;
}

/**
 * The words after `--` as one shell command line. One word is taken as written (so
 * `-- 'ls | wc -l'` keeps its pipe); several are quoted so each reaches the program unchanged.
 */
export function commandLine(words: string[]): string {
  if (words.length === 1) return words[0] ?? '';
  return words.map(shellQuote).join(' ');
}

export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The exit code a finished process maps to; signals follow the shell's 128+n convention. */
export function processExitCode(process: { status: string; exitCode: number | null }): number {
  if (process.status === 'killed') return 137;
  if (process.status === 'stopped') return 143;
  return typeof process.exitCode === 'number' && process.exitCode >= 0 ? process.exitCode : 1;
}
