import type { CoreEvent } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';

/**
 * Every change appends an event (spec "Events" rule 1): `{type, status, message, revision,
 * canaryRevision, time}`. `revision` is the row revision the change produces, as text.
 */
export function newEvent(
  row: Pick<ResourceRow, 'revision'> | undefined,
  type: string,
  status: string,
  message: string,
  now: Date,
): CoreEvent {
  return {
    type,
    status,
    message,
    revision: String((row?.revision ?? 0) + 1),
    canaryRevision: '',
    time: now.toISOString(),
  };
}

/** `status` of applications, drives and volumes: a plain string computed from events (spec "Resources"). */
export function statusFromEvents(events: readonly CoreEvent[], fallback = 'UNKNOWN'): string {
  return events.at(-1)?.status ?? fallback;
}
