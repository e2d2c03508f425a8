// Time as a dependency: monotonic now() for deadlines, wall time for records, and sleep.
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Monotonic milliseconds (fractional). */
  now(): number;
  /** Wall-clock time for timestamps written to disk. */
  date(): Date;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  date: () => new Date(),
  sleep: (ms) => delay(ms),
};
