/**
 * Controllers write status, state, events and system fields back with optimistic concurrency: read,
 * compute a patch from what was read, update only if nobody wrote since, else read again and retry.
 * An API handler writing the spec meanwhile therefore never loses its write, and neither do we.
 */
import { StaleRevisionError, type ResourceEvent, type ResourcePatch, type ResourceRow } from '@tarmac/store';
import type { Store } from '@tarmac/store';

export type Resources = Store['resources'];

/** Computes the patch from the current row; undefined = nothing to write (or the row is gone). */
export type Mutation<Spec> = (row: ResourceRow<Spec>) => ResourcePatch | undefined;

export async function mutate<Spec>(
  resources: Resources,
  id: string,
  change: Mutation<Spec>,
  attempts = 8,
): Promise<ResourceRow<Spec> | undefined> {
  for (let i = 0; ; i++) {
    const row = await resources.getById<Spec>(id);
    if (!row) return undefined;
    const patch = change(row);
    if (!patch) return row;
    try {
      return await resources.update<Spec>(id, patch, row.revision);
    } catch (err) {
      if (!(err instanceof StaleRevisionError) || i + 1 >= attempts) throw err;
    }
  }
}

/** An event of the envelope (spec "Common envelope"); revision fields unused for sandboxes. */
export function event(type: string, status: string, message: string, now: Date): ResourceEvent {
  return { type, status, message, revision: '', canaryRevision: '', time: now.toISOString() };
}
