import type { RunningPlatform } from './platform.js';
import { engineIds, waitFor } from '../sandboxes/support.js';

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
