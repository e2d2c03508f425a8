import { z } from 'zod';
import { displayNameSchema, labelsSchema, nameSchema, timestampSchema } from '../common.js';

/**
 * The common resource envelope `{metadata, spec, events, status}` (spec "Common envelope";
 * reference §0 "Resource envelope"). `events` and `status` are read-only: accepted and ignored in
 * requests, always present in responses. `apiVersion` and `kind` are sent by CLIs and ignored.
 */

/** Deployment status values (spec "States and transitions"; TERMINATING is what SDKs also check). */
export const DEPLOYMENT_STATUSES = [
  'DELETING',
  'TERMINATED',
  'FAILED',
  'DEACTIVATED',
  'DEACTIVATING',
  'UPLOADING',
  'BUILDING',
  'DEPLOYING',
  'DEPLOYED',
  'BUILT',
] as const;
export const deploymentStatusSchema = z.enum(DEPLOYMENT_STATUSES);
export type DeploymentStatus = z.infer<typeof deploymentStatusSchema>;

/** `externalId`: caller-owned, max 64, `[A-Za-z0-9-]` (reference §0). */
export const externalIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9-]+$/, 'must be letters, digits and "-"');

/** Request metadata: what a caller may set. Unknown keys are ignored (read-only fields echoed back). */
export const metadataInputSchema = z.object({
  name: nameSchema,
  displayName: displayNameSchema.optional(),
  externalId: externalIdSchema.optional(),
  labels: labelsSchema.optional(),
});
export type MetadataInput = z.infer<typeof metadataInputSchema>;

/** Response metadata: the request fields plus the system-filled ones. */
export const metadataSchema = z
  .object({
    name: z.string(),
    displayName: z.string(),
    externalId: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
    createdBy: z.string(),
    updatedBy: z.string(),
    plan: z.string(),
    url: z.string(),
    workspace: z.string(),
  })
  .meta({ id: 'Metadata' });
export type Metadata = z.infer<typeof metadataSchema>;

/** Element of `events` (spec "Common envelope"). */
export const coreEventSchema = z
  .object({
    type: z.string(),
    status: z.string(),
    message: z.string(),
    revision: z.string(),
    canaryRevision: z.string(),
    time: timestampSchema,
  })
  .meta({ id: 'CoreEvent' });
export type CoreEvent = z.infer<typeof coreEventSchema>;

/** Fields a client may send but the server owns; parsed loosely and then ignored. */
export const readOnlyEnvelopeFields = {
  apiVersion: z.unknown().optional(),
  kind: z.unknown().optional(),
  events: z.unknown().optional(),
  status: z.unknown().optional(),
  state: z.unknown().optional(),
};

/** A create/update body: `{metadata, spec}` both required (spec "Management API"), plus ignored extras. */
export function envelopeInputSchema<S extends z.ZodType>(spec: S) {
  return z.object({ metadata: metadataInputSchema, spec, ...readOnlyEnvelopeFields });
}

/** A response envelope for a resource whose spec is `spec`, with `extra` top-level fields. */
export function envelopeSchema<S extends z.ZodType, E extends z.ZodRawShape>(spec: S, extra: E) {
  return z.object({ metadata: metadataSchema, spec, events: z.array(coreEventSchema), ...extra });
}
