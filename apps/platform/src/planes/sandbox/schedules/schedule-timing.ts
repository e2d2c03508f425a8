import { Cron } from 'croner';
import { lifecycleDurationSeconds } from '@tarmac/contract';

/**
 * When a schedule entry fires (reference `SandboxScheduleEntry`): `cron` is a 5-field expression
 * in UTC (croner 11, "5-part" mode so a 6th seconds field is refused); `at` an RFC 3339 time;
 * `sleep` a duration from now, stored as the `at` it resolves to (reference: "sleep is converted
 * to at on create"). A bad value is an Error whose message names what is wrong, for a 400.
 */
export type StoredTiming = { type: 'cron' | 'at'; value: string };

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** An `at` further out than this is a typo more often than a plan. */
const MAX_AHEAD_MS = 366 * 86_400_000;

export function resolveTiming(type: 'cron' | 'at' | 'sleep', value: string, now: Date): StoredTiming {
  if (type === 'cron') {
    cronOf(value); // throws on a bad expression
    return { type, value: value.trim() };
  }
  let at: number;
  if (type === 'sleep') {
    const seconds = lifecycleDurationSeconds(value);
    if (seconds === undefined || seconds < 1) {
      throw new Error('must be a duration such as 30s, 5m, 2h or 7d for a sleep entry');
    }
    at = now.getTime() + seconds * 1000;
  } else {
    if (!RFC3339.test(value)) throw new Error('must be an RFC 3339 time such as 2026-07-01T09:00:00Z');
    at = Date.parse(value);
    if (Number.isNaN(at)) throw new Error('must be an RFC 3339 time such as 2026-07-01T09:00:00Z');
  }
  if (at - now.getTime() > MAX_AHEAD_MS) throw new Error('must be within a year from now');
  return { type: 'at', value: new Date(at).toISOString() };
}

function cronOf(value: string): Cron {
  if (value.trim().split(/\s+/).length !== 5) {
    throw new Error('must be a 5-field cron expression (minute hour day month weekday), in UTC');
  }
  try {
    return new Cron(value.trim(), { timezone: 'UTC', mode: '5-part', paused: true });
  } catch (err) {
    throw new Error(`is not a valid cron expression: ${(err as Error).message}`);
  }
}

/**
 * The instant a schedule is due for: the latest fire time at or before `now` that is later than
 * `after` (the last instant claimed, or the entry's creation), or undefined when nothing is due.
 * A cron entry that missed several instants (the platform was down) fires once, for the latest.
 */
export function dueInstant(timing: StoredTiming, after: Date, now: Date): Date | undefined {
  if (timing.type === 'at') {
    const at = new Date(timing.value);
    return at.getTime() > after.getTime() && at.getTime() <= now.getTime() ? at : undefined;
  }
  const next = cronOf(timing.value).nextRun(after);
  if (!next || next.getTime() > now.getTime()) return undefined;
  const [latest] = cronOf(timing.value).previousRuns(1, new Date(now.getTime() + 1));
  return latest && latest.getTime() > after.getTime() ? latest : next;
}

/** The next instant after `after` (null for an `at` already past it). */
export function nextInstant(timing: StoredTiming, after: Date): Date | null {
  if (timing.type === 'at') {
    const at = new Date(timing.value);
    return at.getTime() > after.getTime() ? at : null;
  }
  return cronOf(timing.value).nextRun(after);
}
