import type { SandboxSpec } from '@tarmac/contract';
import { ApiError } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import type { ResourceCollection } from '../../../framework/collection.js';
import type { SandboxServiceDeps } from './sandboxes.deps.js';

// Who holds a sandbox name: the previous sandbox of a name, and the answer when it is taken.

/** Statuses in which a sandbox no longer counts as existing for createIfNotExist (spec "States"). */
export const GONE = new Set(['FAILED', 'TERMINATED', 'TERMINATING', 'DELETING']);

/** Longest a create waits for the previous sandbox of its name to finish deleting. */
const REUSE_WAIT_MS = 60_000;

/**
 * The sandbox that holds this name, if any (issue 14 item 2: a deleted name is free at once).
 * One being deleted is waited for (bounded, woken by the controller's notices), and a
 * TERMINATED record — kept a while only so lists with showTerminated can show it — is removed
 * so the new sandbox can take its name; its usage is charged by the meter up to its removal.
 */
export async function previousOf(
  col: ResourceCollection<SandboxSpec>,
  deps: SandboxServiceDeps,
  workspace: string,
  name: string,
): Promise<ResourceRow<SandboxSpec> | undefined> {
  const deadline = deps.now().getTime() + REUSE_WAIT_MS;
  for (;;) {
    const watch = deps.watchSandbox?.(workspace, name); // before the read: no notice lost
    try {
      const row = await col.find(workspace, name);
      if (!row) return undefined;
      if (row.terminatedAt) {
        await col.remove(row);
        return undefined;
      }
      const left = deadline - deps.now().getTime();
      if (row.status !== 'DELETING' || !watch || left <= 0) return row;
      await watch.next(left);
    } finally {
      watch?.cancel();
    }
  }
}

export function alreadyExists(workspace: string, name: string, now: Date): ApiError {
  // Our `{error, code, message}` plus the vendor SDK's SandboxError fields (reference §0, sandbox-api
  // §2.4): the SDK's createIfNotExists retries on `code === 409`.
  return new ApiError('sandbox_already_exists', `Sandbox "${name}" already exists`, {
    extra: {
      sandbox_name: name,
      workspace,
      status_code: 409,
      step: 'create',
      timestamp: now.toISOString(),
      reason: 'SANDBOX_ALREADY_EXISTS',
    },
  });
}
