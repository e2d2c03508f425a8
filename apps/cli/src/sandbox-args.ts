/** Argument parsing of the sandbox commands, kept pure for tests. */

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
    if (eq < 1) throw new Error(`--env expects KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid port "${text}"`);
  return port;
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
