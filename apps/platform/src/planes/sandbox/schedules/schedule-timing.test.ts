import { describe, expect, it } from 'vitest';
import { dueInstant, nextInstant, resolveTiming } from './schedule-timing.js';

const now = new Date('2026-05-01T12:00:30Z');

describe('schedule timing', () => {
  it('turns a sleep into the at it resolves to and keeps at and cron values', () => {
    expect(resolveTiming('sleep', '90s', now)).toEqual({ type: 'at', value: '2026-05-01T12:02:00.000Z' });
    expect(resolveTiming('at', '2026-05-02T00:00:00+02:00', now)).toEqual({
      type: 'at',
      value: '2026-05-01T22:00:00.000Z',
    });
    expect(resolveTiming('cron', ' */5 * * * * ', now)).toEqual({ type: 'cron', value: '*/5 * * * *' });
  });

  it('refuses what is not a 5-field UTC cron, an RFC 3339 time or a duration', () => {
    expect(() => resolveTiming('cron', '* * * * * *', now)).toThrow(/5-field/);
    expect(() => resolveTiming('cron', '61 * * * *', now)).toThrow(/not a valid cron/);
    expect(() => resolveTiming('at', '2026-05-01 12:00', now)).toThrow(/RFC 3339/);
    expect(() => resolveTiming('at', '2099-01-01T00:00:00Z', now)).toThrow(/within a year/);
    expect(() => resolveTiming('sleep', '0s', now)).toThrow(/duration/);
    expect(() => resolveTiming('sleep', 'soon', now)).toThrow(/duration/);
  });

  it('is due for an at once its time passed, and never again after it was claimed', () => {
    const at = { type: 'at' as const, value: '2026-05-01T12:00:10.000Z' };
    expect(dueInstant(at, new Date(0), new Date('2026-05-01T12:00:09Z'))).toBeUndefined();
    expect(dueInstant(at, new Date(0), now)?.toISOString()).toBe(at.value);
    expect(dueInstant(at, new Date(at.value), now)).toBeUndefined();
    expect(nextInstant(at, new Date(at.value))).toBeNull();
  });

  it('fires a cron that missed several instants once, for the latest, in UTC', () => {
    const cron = { type: 'cron' as const, value: '*/10 * * * *' };
    const armed = new Date('2026-05-01T11:00:30Z');
    expect(dueInstant(cron, armed, now)?.toISOString()).toBe('2026-05-01T12:00:00.000Z');
    expect(dueInstant(cron, new Date('2026-05-01T12:00:00Z'), now)).toBeUndefined();
    expect(nextInstant(cron, new Date('2026-05-01T12:00:00Z'))?.toISOString()).toBe(
      '2026-05-01T12:10:00.000Z',
    );
    const daily = { type: 'cron' as const, value: '0 8 * * *' };
    expect(nextInstant(daily, now)?.toISOString()).toBe('2026-05-02T08:00:00.000Z');
  });
});
