import type { CoreEvent } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';

/**
 * The one event builder (spec "Events" rule 1): `{type, status, message, revision, canaryRevision,
 * time}`. Two numberings exist and are kept as they are on the wire: API writes carry the row
 * revision they produce (`newEvent`); controllers' sandbox and volume events carry none (`''`,
 * planes/sandbox/controllers/record-writer.ts).
 */
export function buildEvent(
  type: string,
  status: string,
  message: string,
  now: Date,
  revision: string,
): CoreEvent {
  return { type, status, message, revision, canaryRevision: '', time: now.toISOString() };
}

/** An API write's event: `revision` is the row revision the change produces, as text. */
export function newEvent(
  row: Pick<ResourceRow, 'revision'> | undefined,
  type: string,
  status: string,
  message: string,
  now: Date,
): CoreEvent {
  return buildEvent(type, status, message, now, String((row?.revision ?? 0) + 1));
}

/** `status` of applications, drives and volumes: a plain string computed from events (spec "Resources"). */
export function statusFromEvents(events: readonly CoreEvent[], fallback = 'UNKNOWN'): string {
  return events.at(-1)?.status ?? fallback;
}
