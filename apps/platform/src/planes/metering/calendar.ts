import type { Resolution } from '@tarmac/contract';
import type { UsageSegment } from '@tarmac/store';

/**
 * UTC calendar arithmetic of the metrics API: bucket starts per resolution and the plan of which
 * rollup (hour, day, month) reads which part of a window.
 *
 * - Buckets are aligned: hourly on the hour, daily at 00:00 UTC, weekly on Monday 00:00 UTC (ISO
 *   8601 weeks), monthly on the 1st at 00:00 UTC. The first bucket is the one holding startTime.
 * - The meter's grain is one hour: an hour of usage belongs to a window when the hour STARTS inside
 *   [startTime, endTime). Adjacent windows therefore never count an hour twice.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const ceilHour = (ms: number) => Math.ceil(ms / HOUR) * HOUR;
export const iso = (ms: number) => new Date(ms).toISOString();

export function bucketStart(resolution: Resolution, ms: number): number {
  const d = new Date(ms);
  switch (resolution) {
    case 'hourly':
      return Math.floor(ms / HOUR) * HOUR;
    case 'daily':
      return Math.floor(ms / DAY) * DAY;
    case 'weekly': {
      const day = Math.floor(ms / DAY) * DAY;
      const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
      return day - weekday * DAY;
    }
    case 'monthly':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

export function nextBucket(resolution: Resolution, start: number): number {
  switch (resolution) {
    case 'hourly':
      return start + HOUR;
    case 'daily':
      return start + DAY;
    case 'weekly':
      return start + 7 * DAY;
    case 'monthly': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

/** Every bucket start of the window [start, end), in order: one timeseries item each. */
export function bucketStarts(resolution: Resolution, start: number, end: number): number[] {
  const starts: number[] = [];
  for (let b = bucketStart(resolution, start); b < end; b = nextBucket(resolution, b)) starts.push(b);
  return starts;
}

const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;
const ceilDay = (ms: number) => Math.ceil(ms / DAY) * DAY;
const ceilMonth = (ms: number) => {
  const m = bucketStart('monthly', ms);
  return m === ms ? ms : nextBucket('monthly', m);
};

/**
 * Which rollup reads which hours of the window: the counted hours [ceilHour(start), ceilHour(end))
 * are covered by whole months (monthly resolution only: a month never straddles two buckets),
 * then whole days (not for hourly resolution), then single hours at the ragged edges.
 */
export function planSegments(resolution: Resolution, start: number, end: number): UsageSegment[] {
  const from = ceilHour(start);
  const to = ceilHour(end);
  if (to <= from) return [];
  const segments: UsageSegment[] = [];
  const add = (grain: UsageSegment['grain'], a: number, b: number) => {
    if (b > a) segments.push({ grain, from: iso(a), to: iso(b) });
  };
  if (resolution === 'hourly') {
    add('hour', from, to);
    return segments;
  }
  const dayFrom = ceilDay(from);
  const dayTo = startOfDay(to);
  if (dayTo <= dayFrom) {
    add('hour', from, to);
    return segments;
  }
  add('hour', from, dayFrom);
  if (resolution === 'monthly') {
    const monthFrom = ceilMonth(dayFrom);
    const monthTo = bucketStart('monthly', dayTo);
    if (monthTo > monthFrom) {
      add('day', dayFrom, monthFrom);
      add('month', monthFrom, monthTo);
      add('day', monthTo, dayTo);
    } else add('day', dayFrom, dayTo);
  } else add('day', dayFrom, dayTo);
  add('hour', dayTo, to);
  return segments;
}
