import { lifecycleDurationSeconds, type SandboxSpec } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';

/**
 * When a sandbox is due for automatic deletion (spec "Sandbox expiry"; reference §2.6): the
 * earliest of `runtime.expires`, `runtime.ttl` (= ttl-max-age) and each expiration policy —
 * `ttl-max-age` from creation, `date` at its timestamp, `ttl-idle` from `system.lastUsedAt` (or
 * creation when never used). Undefined when nothing is configured: such a sandbox never expires.
 * The sandbox controller calls this too, so the API's `expiresIn` and the deletion agree.
 */
export function sandboxExpiresAt(row: ResourceRow<SandboxSpec>): Date | undefined {
  const created = Date.parse(row.createdAt);
  const lastUsed = typeof row.system.lastUsedAt === 'string' ? Date.parse(row.system.lastUsedAt) : created;
  const candidates: number[] = [];
  const after = (from: number, duration: string) => {
    const seconds = lifecycleDurationSeconds(duration);
    if (seconds !== undefined) candidates.push(from + seconds * 1000);
  };
  const runtime = row.spec.runtime;
  if (runtime?.expires) candidates.push(Date.parse(runtime.expires));
  if (runtime?.ttl) after(created, runtime.ttl);
  for (const policy of row.spec.lifecycle?.expirationPolicies ?? []) {
    if (policy.type === 'date') candidates.push(Date.parse(policy.value));
    else if (policy.type === 'ttl-max-age') after(created, policy.value);
    else after(Number.isNaN(lastUsed) ? created : lastUsed, policy.value);
  }
  const valid = candidates.filter((t) => !Number.isNaN(t));
  return valid.length > 0 ? new Date(Math.min(...valid)) : undefined;
}

/** Seconds until deletion, never negative; undefined when the sandbox has no expiry configured. */
export function sandboxExpiresIn(row: ResourceRow<SandboxSpec>, now: Date): number | undefined {
  const at = sandboxExpiresAt(row);
  return at === undefined ? undefined : Math.max(0, Math.ceil((at.getTime() - now.getTime()) / 1000));
}
