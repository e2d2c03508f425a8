import { event, mutate, type Resources } from './record-writer.js';
import { holderOf, holderPatch, sandboxHolder } from '../records/volume-holder.js';
import { VOLUME_KIND, type SandboxRow } from '../records/sandbox-record.js';

/**
 * Writes (or clears) `attachedTo` (`sandbox:<name>`, shown as `state.attachedTo`) on the volumes
 * the sandbox mounts. The sandboxes module reserves them at create; this re-asserts it after a
 * deploy and frees them once the sandbox is gone, so its data can be mounted by the next one.
 */
export async function markVolumes(
  resources: Resources,
  row: SandboxRow,
  attach: boolean,
  date: () => Date,
): Promise<void> {
  const holder = sandboxHolder(row.name);
  for (const v of row.spec.volumes ?? []) {
    const vol = await resources.get(row.workspace, VOLUME_KIND, v.name);
    if (!vol || vol.terminatedAt) continue;
    await mutate(resources, vol.id, (r) => {
      const current = holderOf(r);
      if (attach ? current !== '' : current !== holder) return undefined; // free or someone else's
      const message = attach ? `Attached to ${holder}` : `Detached from ${holder}`;
      return {
        ...holderPatch(r, attach ? holder : ''),
        events: [
          ...r.events,
          event(attach ? 'attached' : 'detached', r.status ?? 'DEPLOYED', message, date()),
        ],
      };
    });
  }
}
