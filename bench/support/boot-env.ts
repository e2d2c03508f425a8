// A sandbox's boot env as the engine keeps it (issue 16: the runc bundle and boot env live in the
// run dir's memory-backed `bundles/<id>/`, never under TARMAC_HOME): the probes read sandboxd's
// token from it to call a sandbox directly. The platform's run dir is /run/tarmac by default.
import { readFileSync } from 'node:fs';

export function sandboxBootEnv(id: string, runDir = '/run/tarmac'): Record<string, string> {
  return JSON.parse(readFileSync(`${runDir}/bundles/${id}/boot-env.json`, 'utf8')) as Record<string, string>;
}
