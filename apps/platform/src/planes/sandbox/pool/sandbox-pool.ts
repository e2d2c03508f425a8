/**
 * What the sandboxes service (records/) asks of the warm pool at create (issue 20): a claimed
 * sandbox for this create, or undefined; then, once its record is written, to make it live. Built
 * by the sandbox plane over the WarmPool, the workspace's image resolution and the controller.
 */
import type { ResourceRow } from '@tarmac/store';
import type { ClaimedSandbox } from './claimed-sandbox.js';
import type { WarmPool } from './warm-pool.js';

export interface PoolClaimRequest {
  workspace: string;
  name: string;
  /** `spec.runtime.image` as written (default tarmac/base:latest). */
  image: string;
  memoryMB: number;
  /** The sandbox's envs, secret ones opened, in spec order. */
  env: Record<string, string>;
}

export interface SandboxPool {
  claim(req: PoolClaimRequest): Promise<ClaimedSandbox | undefined>;
  /** The claimed sandbox's record is written (DEPLOYED): it answers requests from now on. */
  adopt(row: ResourceRow<unknown>, claimed: ClaimedSandbox): void;
}

export function sandboxPool(d: {
  pool: WarmPool;
  /** The engine ref an image names in a workspace (what the controller would boot). */
  resolveImage: (workspace: string, ref: string) => Promise<string | undefined>;
  /** The lifecycle controller's adopt (puts the sandbox in the live map). */
  adopt: (row: ResourceRow<never>, ip: string, bootedMs: number) => void;
  /** The hostnames the sandbox's /mcp accepts (what a boot passes as TARMAC_SANDBOXD_MCP_HOSTS). */
  mcpHosts?: (sandbox: { workspace: string; name: string }) => string[];
}): SandboxPool {
  return {
    async claim(req) {
      const engineImage = await d.resolveImage(req.workspace, req.image);
      if (engineImage === undefined) return undefined;
      return d.pool.claim({ ...req, engineImage, mcpHosts: d.mcpHosts?.(req) ?? [] });
    },
    adopt(row, claimed) {
      d.adopt(row as ResourceRow<never>, claimed.ip, claimed.bootedMs);
      claimed.settle();
    },
  };
}
