import { z } from 'zod';
import { listQuerySchema } from '../pagination.js';
import { DEPLOYMENT_STATUSES, externalIdSchema } from './envelope.js';

/**
 * Query parameters shared by the catalogue's routes (reference §0 "Pagination", §1.6-1.8):
 * `status` is a comma list, case-insensitive, an unknown value is a 400 naming the allowed ones;
 * `showTerminated` reveals terminated records (hidden by default); booleans are `true|false`.
 */

/** `true` / `false` in a query string (anything else is a 400 naming the parameter). */
export const queryBooleanSchema = z
  .enum(['true', 'false', 'TRUE', 'FALSE', 'True', 'False', '1', '0'], {
    error: 'must be true or false',
  })
  .transform((v) => v.toLowerCase() === 'true' || v === '1');

/** Status values a `status` filter accepts: the deployment statuses and TERMINATING (SDKs check it). */
export const STATUS_FILTER_VALUES = [...DEPLOYMENT_STATUSES, 'TERMINATING'] as const;

/** A comma list of statuses, e.g. `DEPLOYED,failed` → `['DEPLOYED', 'FAILED']`. */
export function statusListSchema(allowed: readonly string[]) {
  const known = new Set(allowed);
  return z
    .string()
    .max(500, 'must be at most 500 characters')
    .transform((text, ctx) => {
      const values = text
        .split(',')
        .map((v) => v.trim().toUpperCase())
        .filter((v) => v !== '');
      const unknown = values.filter((v) => !known.has(v));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown status ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`,
        });
        return z.NEVER;
      }
      return [...new Set(values)];
    })
    .meta({ description: `Comma list, case-insensitive, of: ${allowed.join(', ')}.` });
}

/** List query of a top-level resource kind: pagination plus `status`, `showTerminated`, `externalId`. */
export function resourceListQuerySchema(statuses: readonly string[] = STATUS_FILTER_VALUES) {
  return listQuerySchema.extend({
    status: statusListSchema(statuses).optional(),
    showTerminated: queryBooleanSchema.optional().meta({
      description: 'Include terminated resources (default false); `status` overrides it.',
    }),
    externalId: externalIdSchema.optional(),
  });
}

export const showSecretsQuerySchema = z.object({
  show_secrets: queryBooleanSchema.optional().meta({
    description: 'Reveal secret env values (workspace admins only; 403 otherwise).',
  }),
});
