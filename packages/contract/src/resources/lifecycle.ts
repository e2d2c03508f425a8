import { z } from 'zod';

/**
 * Sandbox durations and expiration policies (spec "Sandbox" leaves them "not shown"; reference
 * control-plane §2.6 / sandbox-api §5): an integer then one of s, m, h, d, w — e.g. `30s`, `5m`,
 * `1h`, `2d`, `1w`; policy types `ttl-idle | ttl-max-age | date`, the only action `delete`.
 */
export const LIFECYCLE_DURATION_PATTERN = /^(\d{1,7})(s|m|h|d|w)$/;
const SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

export function lifecycleDurationSeconds(text: string): number | undefined {
  const match = LIFECYCLE_DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * SECONDS[match[2] as keyof typeof SECONDS];
}

export const lifecycleDurationSchema = z
  .string()
  .regex(
    LIFECYCLE_DURATION_PATTERN,
    'must be a duration: an integer then s, m, h, d or w (e.g. 30s, 5m, 1h, 2d, 1w)',
  );

/** ISO 8601 timestamp with a time zone, e.g. `2026-05-01T12:00:00Z`. */
export const isoTimestampSchema = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 timestamp such as 2026-05-01T12:00:00Z',
});

export const EXPIRATION_POLICY_TYPES = ['ttl-idle', 'ttl-max-age', 'date'] as const;
export const EXPIRATION_ACTIONS = ['delete'] as const;

export const expirationPolicySchema = z
  .object({
    type: z.enum(EXPIRATION_POLICY_TYPES, {
      error: `must be one of ${EXPIRATION_POLICY_TYPES.join(', ')}`,
    }),
    value: z.string().max(64, 'must be at most 64 characters'),
    action: z.enum(EXPIRATION_ACTIONS, { error: 'must be delete (the only action)' }).default('delete'),
  })
  .superRefine((policy, ctx) => {
    const ok =
      policy.type === 'date'
        ? isoTimestampSchema.safeParse(policy.value).success
        : LIFECYCLE_DURATION_PATTERN.test(policy.value);
    if (!ok) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message:
          policy.type === 'date'
            ? 'must be an ISO 8601 timestamp for type date'
            : 'must be a duration such as 30s, 5m, 1h, 2d or 1w',
      });
    }
  });

export const lifecycleSchema = z.object({
  expirationPolicies: z.array(expirationPolicySchema).max(10, 'at most 10 policies').optional(),
  terminatedRetention: lifecycleDurationSchema.optional().meta({ description: 'Default 5m.' }),
});
export type Lifecycle = z.infer<typeof lifecycleSchema>;
