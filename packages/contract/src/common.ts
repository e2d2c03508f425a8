import { z } from 'zod';

/** Resource and workspace names (reference §0 Metadata): lowercase alphanumerics and `-`, max 49. */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
export const nameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(49, 'must be at most 49 characters')
  .regex(
    NAME_PATTERN,
    'must be lowercase letters, digits and "-", starting and ending with a letter or digit',
  );

export const displayNameSchema = z.string().max(63, 'must be at most 63 characters');
export const labelsSchema = z.record(
  z.string().min(1).max(63),
  z.string().max(255, 'label values must be at most 255 characters'),
);
export const timestampSchema = z.string().meta({ description: 'ISO 8601 timestamp (UTC).' });

/**
 * Durations such as `30s`, `5m`, `24h`, `30d`, `1w`, `10y` (reference §1.14, §2.6).
 */
export const DURATION_PATTERN = /^(\d{1,6})(s|m|h|d|w|y)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 } as const;

export function parseDurationSeconds(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
}

export const durationSchema = z
  .string()
  .regex(DURATION_PATTERN, 'must be a duration like 30s, 5m, 24h, 30d, 1w or 1y');
