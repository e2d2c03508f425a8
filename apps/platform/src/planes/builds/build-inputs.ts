import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a build takes from the uploaded folder besides the Dockerfile (issue 15 "Builds"):
 *  - build args from `[build.args]` of tarmac.toml or blaxel.toml (the public platform's file, so
 *    its projects build unchanged). A line scan of that one table: `KEY = "value"` (basic or
 *    literal string), numbers and booleans; anything else in the file is not read here;
 *  - secret build args from `.env.build` (`KEY=VALUE` lines), which the caller removes from the
 *    context and passes as `--secret id=KEY`: never a layer, never a build arg, masked in logs.
 */
export function buildArgs(dir: string): Record<string, string> {
  const file = ['tarmac.toml', 'blaxel.toml'].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) return {};
  const out: Record<string, string> = {};
  let inArgs = false;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      inArgs = line.replace(/\s/g, '') === '[build.args]';
      continue;
    }
    if (!inArgs) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*(#.*)?$/.exec(line);
    if (!m) continue;
    const value = tomlScalar(m[2]!);
    if (value !== undefined) out[m[1]!] = value;
  }
  return out;
}

function tomlScalar(v: string): string | undefined {
  if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) {
    return v.slice(1, -1).replace(/\\(["\\nt])/g, (_, c: string) => ({ n: '\n', t: '\t' })[c] ?? c);
  }
  if (v.startsWith("'") && v.endsWith("'") && v.length >= 2) return v.slice(1, -1);
  if (/^(true|false|[+-]?\d[\d_.eE+-]*)$/.test(v)) return v;
  return undefined;
}

/** `.env.build` as `KEY -> value` (comments and blank lines skipped, optional quotes removed). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2]!;
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1);
    }
    out[m[1]!] = value;
  }
  return out;
}
