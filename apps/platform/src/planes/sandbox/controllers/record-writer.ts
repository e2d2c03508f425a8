/**
 * Controllers write status, state, events and system fields back with optimistic concurrency,
 * through the platform's one read-modify-write loop and one event builder (framework/).
 */
import type { ResourceEvent, ResourcePatch, ResourceRow, Store } from '@tarmac/store';
import { buildEvent } from '../../../framework/events.js';
import { patchById } from '../../../framework/read-modify-write.js';

export type Resources = Store['resources'];

/** Computes the patch from the current row; undefined = nothing to write (or the row is gone). */
export type Mutation<Spec> = (row: ResourceRow<Spec>) => ResourcePatch | undefined;

/** Read-modify-write of one record by id (framework/read-modify-write.ts; 8 attempts). */
export function mutate<Spec>(
  resources: Resources,
  id: string,
  change: Mutation<Spec>,
  attempts = 8,
): Promise<ResourceRow<Spec> | undefined> {
  return patchById(resources, id, change, attempts);
}

/** An event of the envelope (spec "Common envelope"); revision fields unused for sandboxes. */
export function event(type: string, status: string, message: string, now: Date): ResourceEvent {
  return buildEvent(type, status, message, now, '');
}
