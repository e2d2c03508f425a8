import { describe, expect, it } from 'vitest';
import { bucketStart, bucketStarts, iso, planSegments } from './calendar.js';

const t = (s: string) => Date.parse(s);

describe('buckets (spec "Billing metrics API": one item per bucket of the whole window, UTC)', () => {
  it('weekly buckets start on Monday 00:00 UTC', () => {
    // 2026-05-07 is a Thursday; its week starts Monday 2026-05-04.
    expect(iso(bucketStart('weekly', t('2026-05-07T13:00:00Z')))).toBe('2026-05-04T00:00:00.000Z');
    expect(iso(bucketStart('weekly', t('2026-05-04T00:00:00Z')))).toBe('2026-05-04T00:00:00.000Z');
    expect(iso(bucketStart('weekly', t('2026-05-10T23:59:59Z')))).toBe('2026-05-04T00:00:00.000Z');
  });

  it('monthly buckets follow calendar months, including February and year ends', () => {
    expect(bucketStarts('monthly', t('2025-11-15T00:00:00Z'), t('2026-03-01T00:00:00Z')).map(iso)).toEqual([
      '2025-11-01T00:00:00.000Z',
      '2025-12-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
    ]);
  });

  it('covers the window with its first bucket holding startTime and the last before endTime', () => {
    expect(bucketStarts('hourly', t('2026-05-01T10:30:00Z'), t('2026-05-01T12:00:00Z')).map(iso)).toEqual([
      '2026-05-01T10:00:00.000Z',
      '2026-05-01T11:00:00.000Z',
    ]);
    expect(bucketStarts('daily', t('2026-05-01T00:00:00Z'), t('2026-05-03T00:00:00.001Z'))).toHaveLength(3);
  });
});

describe('segment plan (which rollup reads which hours)', () => {
  it('reads whole months, whole days and edge hours, covering exactly the counted hours', () => {
    expect(planSegments('monthly', t('2026-01-30T22:10:00Z'), t('2026-04-02T03:00:00Z'))).toEqual([
      { grain: 'hour', from: '2026-01-30T23:00:00.000Z', to: '2026-01-31T00:00:00.000Z' },
      { grain: 'day', from: '2026-01-31T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' },
      { grain: 'month', from: '2026-02-01T00:00:00.000Z', to: '2026-04-01T00:00:00.000Z' },
      { grain: 'day', from: '2026-04-01T00:00:00.000Z', to: '2026-04-02T00:00:00.000Z' },
      { grain: 'hour', from: '2026-04-02T00:00:00.000Z', to: '2026-04-02T03:00:00.000Z' },
    ]);
  });

  it('never reads a day for hourly resolution, nor a month for weekly', () => {
    expect(planSegments('hourly', t('2026-05-01T00:00:00Z'), t('2026-05-03T00:00:00Z'))).toEqual([
      { grain: 'hour', from: '2026-05-01T00:00:00.000Z', to: '2026-05-03T00:00:00.000Z' },
    ]);
    const weekly = planSegments('weekly', t('2026-01-01T00:00:00Z'), t('2026-06-01T00:00:00Z'));
    expect(weekly.map((s) => s.grain)).toEqual(['day']);
  });

  it('is empty when no hour starts inside the window', () => {
    expect(planSegments('hourly', t('2026-05-01T10:10:00Z'), t('2026-05-01T10:50:00Z'))).toEqual([]);
  });
});
