// The warm pool's claim (issue 20): a sandbox booted ahead of demand becomes a named one. What the
// claim changes in here is the environment of the processes sandboxd starts from then on (the
// hostname itself is set by the engine from the host: the sandbox holds no CAP_SYS_ADMIN). Rules:
//  - only a sandboxd started pooled (TARMAC_SANDBOXD_POOLED, read and removed by main.ts) has the
//    route; any other answers 404 as for an unknown route, so a user cannot rewrite a sandbox's env;
//  - accepted once: a second claim is 409, so nothing reaching it later (the claimed sandbox's own
//    users, through the gateway) can change what the claim set;
//  - remembered in the private state dir, so a sandboxd restarted by its supervisor (which starts
//    it with the boot environment again) still gives processes the claimed environment.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { sandboxdClaimSchema, type SandboxdClaim } from '@tarmac/contract';
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
  /** Readies the first exec (ProcessManager.warm): `POST /_tarmac/warm`, before the claim. */
  warm?: () => Promise<void>;
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

export function claimRoutes(app: Hono, o: ClaimOptions): void {
  if (!o.pooled) return;
  let claimed = restoreClaim(o);
  // The pool calls this once the sandbox is up, before freezing it (issue 20 item 1): what the
  // first exec would otherwise do after the claim (FIFOs, the first spawn) is done while nobody
  // waits. Before the claim only: a claimed sandbox has nothing to prepare.
  app.post(WARM_PATH, async (c) => {
    if (claimed) throw new HttpError(409, 'this sandbox was claimed already');
    await o.warm?.();
    return c.json({ message: 'warm' });
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
}
