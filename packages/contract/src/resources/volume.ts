import { z } from 'zod';
import { envelopeInputSchema, envelopeSchema } from './envelope.js';

/**
 * A persistent volume (spec "Volume"; reference control-plane §1.7, §2.6): `spec` is immutable
 * after creation except that `size` (MB) may grow; `state.attachedTo` names the sandbox holding it
 * (`sandbox:<name>`); `status` is a plain string computed from events.
 */
export const volumeSpecSchema = z.object({
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  size: z
    .number()
    .int('must be an integer number of MB')
    .min(1, 'must be at least 1 (MB)')
    .max(16_777_216, 'must be at most 16777216 (MB)')
    .optional()
    .meta({ description: 'MB; default 1024; may grow, never shrink.' }),
  template: z
    .string()
    .max(128, 'must be at most 128 characters')
    .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(:[A-Za-z0-9._-]+)?$/, 'must be name or name:revision')
    .optional(),
  /** Server-assigned; accepted in requests (echoed back) and ignored. */
  infrastructureId: z.string().optional(),
});
export type VolumeSpec = z.infer<typeof volumeSpecSchema>;

export const volumeInputSchema = envelopeInputSchema(volumeSpecSchema).meta({ id: 'VolumeInput' });
export type VolumeInput = z.infer<typeof volumeInputSchema>;

export const volumeSchema = envelopeSchema(volumeSpecSchema, {
  state: z.object({ attachedTo: z.string() }),
  status: z.string(),
  terminatedAt: z.string().optional(),
}).meta({ id: 'Volume' });
export type Volume = z.infer<typeof volumeSchema>;
