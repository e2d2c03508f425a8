import { describe, expect, it } from 'vitest';
import { dueOccurrence, triggerKey } from './cron-triggers.js';

const minute = (iso: string) => Date.parse(iso) / 60_000;

describe('cron occurrences (UTC)', () => {
  it('fires the first occurrence after the last handled minute once it is not in the future', () => {
    const last = minute('2026-01-01T10:00:00Z');
    expect(dueOccurrence('* * * * *', last, Date.parse('2026-01-01T10:00:59Z'))).toBeUndefined();
    expect(dueOccurrence('* * * * *', last, Date.parse('2026-01-01T10:01:02Z'))).toBe(last + 1);
    // Long downtime: one occurrence (the first missed), the caller then counts up to now.
    expect(dueOccurrence('*/5 * * * *', last, Date.parse('2026-01-01T13:00:00Z'))).toBe(last + 5);
    // Read in UTC whatever the host's zone.
    expect(dueOccurrence('0 12 * * *', last, Date.parse('2026-01-01T12:00:01Z'))).toBe(
      minute('2026-01-01T12:00:00Z'),
    );
  });

  it('names triggers safely for execution ids', () => {
    expect(triggerKey({ id: 'Nightly Build!' }, 0)).toBe('nightly-build');
    expect(triggerKey({}, 3)).toBe('t3');
  });
});
