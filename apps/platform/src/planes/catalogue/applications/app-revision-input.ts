/**
 * Which `revisions[]` entry of a request body the new revision comes from (spec "Application":
 * `revisions[] {id, image, createdAt, createdBy, memory, port, envs}`; reference control-plane.md
 * §3.3: the CLI sends `revisions[0] = {image, envs, memory}`). The newest entry wins: the one with
 * the latest `createdAt`, an entry without one counting as newest (it is being made now); on a tie
 * the first listed (responses list newest first, so a body read back from a GET picks the current
 * revision). Entries without an image are history the server owns and are skipped.
 */
import type { AppRevisionInput } from '@tarmac/contract';

export function newestRevisionEntry(
  entries: readonly AppRevisionInput[] | undefined,
): AppRevisionInput | undefined {
  let best: AppRevisionInput | undefined;
  let bestAt = -Infinity;
  for (const e of entries ?? []) {
    if (!e.image) continue;
    const parsed = e.createdAt === undefined ? Infinity : Date.parse(e.createdAt);
    const at = Number.isNaN(parsed) ? -Infinity : parsed;
    if (!best || at > bestAt) {
      best = e;
      bestAt = at;
    }
  }
  return best;
}
