import { z } from 'zod';
import { displayNameSchema, nameSchema, timestampSchema } from '../common.js';
import { coreEventSchema, deploymentStatusSchema, readOnlyEnvelopeFields } from './envelope.js';
import { isoTimestampSchema, lifecycleDurationSchema } from './lifecycle.js';

/**
 * A sandbox preview (spec "Sandbox preview"; reference control-plane §2.6 `Preview`): a public or
 * private URL onto one sandbox port. Its metadata has its own shape; `spec.region` and `spec.url`
 * are response-only. Tokens of private previews (`PreviewToken`) are shown once and stored hashed.
 */

const headerMap = z
  .record(
    z
      .string()
      .min(1)
      .max(256)
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
    z.string().max(8192),
  )
  .optional();

export const previewSpecSchema = z.object({
  port: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(65_535, 'must be at most 65535'),
  public: z.boolean().optional(),
  prefixUrl: z
    .string()
    .max(63, 'must be at most 63 characters')
    .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be a DNS label (lowercase letters, digits, "-")')
    .optional(),
  customDomain: z
    .string()
    .max(253, 'must be at most 253 characters')
    .regex(/^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name such as example.com')
    .optional(),
  requestHeaders: headerMap,
  responseHeaders: headerMap,
  ttl: lifecycleDurationSchema.optional(),
  expires: isoTimestampSchema.optional(),
});
export type PreviewSpec = z.infer<typeof previewSpecSchema>;

/** Request metadata: `resourceName`, `resourceType`, `workspace` are accepted and taken from the path. */
export const previewMetadataInputSchema = z.object({
  name: nameSchema,
  displayName: displayNameSchema.optional(),
  resourceName: z.string().optional(),
  resourceType: z.string().optional(),
  workspace: z.string().optional(),
});

export const previewInputSchema = z
  .object({ metadata: previewMetadataInputSchema, spec: previewSpecSchema, ...readOnlyEnvelopeFields })
  .meta({ id: 'PreviewInput' });
export type PreviewInput = z.infer<typeof previewInputSchema>;

export const previewMetadataSchema = z.object({
  name: z.string(),
  displayName: z.string(),
  resourceName: z.string(),
  resourceType: z.string(),
  workspace: z.string(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
  createdBy: z.string(),
  updatedBy: z.string(),
});

export const previewSchema = z
  .object({
    metadata: previewMetadataSchema,
    spec: previewSpecSchema.extend({ region: z.string(), url: z.string() }),
    events: z.array(coreEventSchema),
    status: deploymentStatusSchema,
  })
  .meta({ id: 'Preview' });
export type Preview = z.infer<typeof previewSchema>;

export const previewTokenInputSchema = z
  .object({
    metadata: z.object({ name: nameSchema.optional() }).optional(),
    spec: z.object({ expiresAt: isoTimestampSchema }),
  })
  .meta({ id: 'PreviewTokenInput' });
export type PreviewTokenInput = z.infer<typeof previewTokenInputSchema>;

export const previewTokenSchema = z
  .object({
    metadata: z.object({
      name: z.string(),
      previewName: z.string(),
      resourceName: z.string(),
      resourceType: z.string(),
      workspace: z.string(),
    }),
    spec: z.object({
      expiresAt: z.string(),
      expired: z.boolean(),
      token: z.string().optional().meta({
        description:
          'Read-only: the token value (reference PreviewToken.spec.token); encrypted at rest, checked by hash.',
      }),
    }),
  })
  .meta({ id: 'PreviewToken' });
export type PreviewToken = z.infer<typeof previewTokenSchema>;

export const messageSchema = z.object({ message: z.string() }).meta({ id: 'Message' });
