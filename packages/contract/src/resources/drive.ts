import { z } from 'zod';
import { envelopeInputSchema, envelopeSchema } from './envelope.js';

/**
 * A drive (spec "Drive"; reference control-plane §1.8, §2.6): shared storage; `spec` is immutable
 * after creation; `size` is in GB (optional: unlimited); at most 3 permissions with mode
 * read|read-write. Storage does not back drives yet: status and events say so.
 */
export const DRIVE_PERMISSION_MODES = ['read', 'read-write'] as const;

export const driveSpecSchema = z.object({
  permissions: z
    .array(
      z.object({
        path: z
          .string()
          .max(1024, 'must be at most 1024 characters')
          .regex(/^\/\S*$/, 'must be an absolute path'),
        labels: z.record(z.string(), z.string()).optional(),
        mode: z.enum(DRIVE_PERMISSION_MODES, { error: 'must be read or read-write' }).optional(),
      }),
    )
    .max(3, 'at most 3 permissions')
    .optional(),
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  size: z
    .number()
    .int('must be an integer number of GB')
    .min(1, 'must be at least 1 (GB)')
    .max(1_048_576)
    .optional(),
  /** Server-assigned; accepted in requests and ignored. */
  infrastructureId: z.string().optional(),
});
export type DriveSpec = z.infer<typeof driveSpecSchema>;

export const driveInputSchema = envelopeInputSchema(driveSpecSchema).meta({ id: 'DriveInput' });
export type DriveInput = z.infer<typeof driveInputSchema>;

/**
 * Drive statuses (deployment status values, spec "Events" rule 1): FAILED, its event saying no
 * storage backs drives, until a storage backend serves them.
 */
export const DRIVE_STATUSES = ['FAILED', 'DELETING', 'TERMINATED'] as const;

export const driveSchema = envelopeSchema(driveSpecSchema, {
  state: z.object({ s3Url: z.string() }),
  status: z.string(),
  terminatedAt: z.string().optional(),
}).meta({ id: 'Drive' });
export type Drive = z.infer<typeof driveSchema>;

export const driveAccessTokenSchema = z
  .object({ access_token: z.string(), expires_in: z.number().int(), token_type: z.literal('Bearer') })
  .meta({ id: 'DriveAccessToken' });
