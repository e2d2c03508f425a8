import type { SandboxSpec } from '@tarmac/contract';
import type { ClaimedSandbox } from '../pool/claimed-sandbox.js';
import { DEFAULT_MEMORY_MB } from './sandbox-record.js';
import { sandboxSecretContext, viewSandboxSpec } from './sandbox-secrets.js';
import type { SandboxServiceDeps } from './sandboxes.deps.js';

/**
 * A pooled sandbox for this create when the pool holds its shape (issue 20): no volumes and no
 * ports (pool members have neither), image and memory equal. Its envs are the sealed spec's,
 * opened again: exactly what the controller hands a sandbox it boots.
 */
export async function claimFromPool(
  deps: SandboxServiceDeps,
  workspace: string,
  name: string,
  spec: SandboxSpec,
  sealed: SandboxSpec,
): Promise<ClaimedSandbox | undefined> {
  const pool = deps.pool;
  if (!pool || (spec.volumes?.length ?? 0) > 0 || (spec.runtime?.ports?.length ?? 0) > 0) return undefined;
  const context = sandboxSecretContext(workspace, name);
  const env: Record<string, string> = {};
  for (const e of viewSandboxSpec(deps.secrets, sealed, context, 'reveal').runtime?.envs ?? []) {
    env[e.name] = e.value ?? '';
  }
  return pool.claim({
    workspace,
    name,
    image: spec.runtime?.image ?? 'tarmac/base:latest',
    memoryMB: spec.runtime?.memory ?? DEFAULT_MEMORY_MB,
    env,
  });
}
