// The warm pool's claim (issue 20): a sandbox booted ahead of demand becomes a named one. What the
// claim changes in here is the environment of the processes sandboxd starts from then on (the
// hostname itself is set by the engine from the host: the sandbox holds no CAP_SYS_ADMIN). Rules:
//  - only a sandboxd started pooled (TARMAC_SANDBOXD_POOLED, read and removed by main.ts) has the
//    route; any other answers 404 as for an unknown route, so a user cannot rewrite a sandbox's env;
//  - accepted once: a second claim is 409, so nothing reaching it later (the claimed sandbox's own
//    users, through the gateway) can change what the claim set;
//  - remembered in the private state dir, so a sandboxd restarted by its supervisor (which starts
//    it with the boot environment again) still gives processes the claimed environment.
// The platform's claim does not call the route: the engine rewrites the sandbox's boot env file
// (packages/engine boot-env.ts, read-only in here, written by the host only) to what a boot for
// the name writes, without the pooled flag, before the create is answered. A pooled sandboxd
// reads that file before it serves any request until it finds it claimed (`bootEnvClaim`): no
// round trip into the sandbox on the create's path (issue 20 item 1), and the claim cannot be
// missed, since nothing reaches the sandbox but the platform until the create is answered.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { processRequestSchema, sandboxdClaimSchema, type SandboxdClaim } from '@tarmac/contract';
import { jsonBody } from './http/body.js';
import { HttpError } from './http/errors.js';

export const CLAIM_PATH = '/_tarmac/claim';
export const WARM_PATH = '/_tarmac/warm';

export interface ClaimOptions {
  /** Started pooled: the claim route exists. */
  pooled: boolean;
  /** The env object every spawner reads (config.env): changed in place. */
  env: Record<string, string>;
  stateDir?: string | undefined;
  /** The hostnames /mcp accepts (mcp/routes.ts): the claim adds the claimed sandbox's own. */
  mcpHosts?: Set<string>;
  /**
   * Readies the first exec: `POST /_tarmac/warm`, before the claim. Its body is a process request
   * (`{"command":"true"}`), read and checked the way `POST /process` reads one (http/body.ts):
   * the first exec's body otherwise went through cold code — 5-12 ms on a loaded host against
   * ~1 ms for the second (issue 20 item 1). The command is not run: ProcessManager.warm runs
   * `true` and forgets it.
   */
  warm?: () => Promise<unknown>;
  /** The boot env file (`--boot-env`): the engine's claim rewrites it (`bootEnvClaim`). */
  bootEnvFile?: string | undefined;
}

/** Set in the boot env of a sandbox booted for the pool; a claimed sandbox's file has none. */
const POOLED_VAR = 'TARMAC_SANDBOXD_POOLED';
/** sandboxd's own variables in the file (main.ts): never in the env it hands to processes. */
const TOKEN_VAR = 'TARMAC_SANDBOXD_TOKEN';
const MCP_HOSTS_VAR = 'TARMAC_SANDBOXD_MCP_HOSTS';

/**
 * The claim the engine wrote into the boot env file, or undefined while the file is still the
 * pooled boot's (its pooled flag set), missing, or not whole (read while being rewritten: a JSON
 * object cut short never parses). sandboxd's own variables become the claim's MCP hosts or go.
 */
export function bootEnvClaim(file: string): SandboxdClaim | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const claim = sandboxdClaimSchema.safeParse({ env: parsed });
  if (!claim.success || claim.data.env[POOLED_VAR] !== undefined) return undefined;
  const { [TOKEN_VAR]: _token, [MCP_HOSTS_VAR]: hosts, ...env } = claim.data.env;
  return { env, mcpHosts: (hosts ?? '').split(',').filter(Boolean) };
}

function apply(o: ClaimOptions, claim: SandboxdClaim): void {
  Object.assign(o.env, claim.env);
  for (const h of claim.mcpHosts ?? []) o.mcpHosts?.add(h.trim().toLowerCase());
}

const fileOf = (stateDir: string) => join(stateDir, 'claim.json');

/** Applies a claim a previous sandboxd of this container accepted; true when there was one. */
export function restoreClaim(o: ClaimOptions): boolean {
  if (!o.pooled || !o.stateDir) return false;
  let text: string;
  try {
    text = readFileSync(fileOf(o.stateDir), 'utf8');
  } catch {
    return false;
  }
  apply(o, JSON.parse(text) as SandboxdClaim);
  return true;
}

/**
 * What a pooled sandboxd runs before serving a request or a terminal (`check`): until claimed,
 * it looks at the boot env file for the engine's claim and applies it once found.
 */
export interface ClaimWatch {
  check(): void;
}

export function claimRoutes(app: Hono, o: ClaimOptions): ClaimWatch {
  if (!o.pooled) return { check: () => undefined };
  let claimed = restoreClaim(o);
  const check = (): void => {
    if (claimed || !o.bootEnvFile) return;
    const found = bootEnvClaim(o.bootEnvFile);
    if (!found) return;
    claimed = true;
    apply(o, found);
  };
  // Before every route, /health included (sandboxd.ts registers this first): the warm pool's
  // claim pings the member right after the engine rewrote the file (apps/platform warm-pool.ts),
  // so the claim is applied on that ping, while the create is still being answered, and not on
  // the user's first request (~0.4 ms of the first exec on the 2-core host; issue 20 item 1). An
  // unclaimed member's pings read the file each time (tens of microseconds, on a tmpfs).
  app.use('*', async (_c, next) => {
    check();
    await next();
  });
  // The pool calls this once the sandbox is up, before freezing it (issue 20 item 1): what the
  // first exec would otherwise do after the claim (FIFOs, the first spawn) is done while nobody
  // waits. Before the claim only: a claimed sandbox has nothing to prepare.
  app.post(WARM_PATH, async (c) => {
    if (claimed) throw new HttpError(409, 'this sandbox was claimed already');
    await jsonBody(c, processRequestSchema);
    return c.json({ message: 'warm', process: await o.warm?.() });
  });
  app.post(CLAIM_PATH, async (c) => {
    const body = await jsonBody(c, sandboxdClaimSchema);
    if (claimed) throw new HttpError(409, 'this sandbox was claimed already');
    claimed = true;
    if (o.stateDir) {
      mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
      const file = fileOf(o.stateDir);
      writeFileSync(`${file}.tmp`, JSON.stringify(body), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    }
    apply(o, body);
    return c.json({ message: 'claimed' });
  });
  return { check };
}
