import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { removeHome, type RunningPlatform } from './platform.js';
import { engineIds, hostLeftovers, IMAGE_CACHE, waitFor } from '../sandboxes/support.js';

/**
 * Deletes the platform's agents, functions and applications and waits until their replicas are gone from the
 * engine. Replicas outlive a platform stop on purpose (the next start re-attaches them; issue 16),
 * so a test that deployed any must remove them before it stops the platform for good.
 */
export async function removeRunWorkloads(p: RunningPlatform, timeoutMs = 60_000): Promise<void> {
  // Named: a test may have given its admin a second workspace.
  const headers = { 'x-service-workspace': p.credentials.workspace };
  for (const kind of ['agents', 'functions', 'applications']) {
    const res = await p.api(`/v0/${kind}`, { headers });
    if (!res.ok) throw new Error(`GET /v0/${kind}: ${res.status} ${await res.text()}`);
    const list = (await res.json()) as Array<{ metadata: { name: string } }>;
    for (const r of list) {
      await p.api(`/v0/${kind}/${encodeURIComponent(r.metadata.name)}`, { method: 'DELETE', headers });
    }
  }
  await waitFor(
    'every replica removed',
    async () => (engineIds(p.home).some((id) => id.startsWith('rp-')) ? undefined : true),
    timeoutMs,
  );
}

/**
 * The end of a run-plane e2e file whose records are already deleted: waits until their replicas
 * left the engine, stops the platform, then asserts nothing stayed behind (no replica, nothing of
 * `ids` on the host) and drops the workspace's built images from the shared image cache.
 */
export async function closeRunPlatform(
  p: RunningPlatform,
  ids: Set<string>,
  workspaceId: string,
): Promise<void> {
  for (const id of engineIds(p.home)) ids.add(id);
  // Replicas stop (SIGTERM, 5 s grace) and go; a start in flight is cancelled.
  const gone = await waitFor(
    'every replica removed',
    async () => (engineIds(p.home).length === 0 ? true : undefined),
    30_000,
  ).catch(() => false);
  const left = engineIds(p.home);
  await p.stop();
  expect(gone, `left: ${left.join(', ')}`).toBe(true);
  expect(hostLeftovers([...ids])).toEqual([]);
  if (workspaceId) {
    for (const d of readdirSync(IMAGE_CACHE)) {
      if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`))
        rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
    }
  }
  removeHome(p.home);
}
