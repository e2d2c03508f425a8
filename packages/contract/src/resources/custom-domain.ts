import { z } from 'zod';
import { displayNameSchema, labelsSchema } from '../common.js';
import { coreEventSchema, externalIdSchema, metadataSchema, readOnlyEnvelopeFields } from './envelope.js';
import { crudRoutes } from './crud-routes.js';

/**
 * Custom domains (reference §1.15). The resource name is the domain itself, so metadata.name takes
 * a DNS name rather than the usual resource name. `status` and the records are server-owned.
 */
export const DOMAIN_TYPES = ['previews', 'applications'] as const;
export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
const DOMAIN_PATTERN = /^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const customDomainSpecInputSchema = z.object({
  domainType: z
    .enum(DOMAIN_TYPES, { error: `must be one of ${DOMAIN_TYPES.join(', ')}` })
    .default('previews'),
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  fallbackPreviewId: z.string().max(64).optional(),
  subjectAlternativeNames: z
    .array(z.string().regex(DOMAIN_PATTERN, 'must be a domain name'))
    .max(10)
    .default([]),
});

export const customDomainSpecSchema = customDomainSpecInputSchema.extend({
  status: z.enum(DOMAIN_STATUSES),
  cnameRecords: z.string(),
  txtRecords: z.record(z.string(), z.string()),
  lastVerifiedAt: z.string().optional(),
  verificationError: z.string().optional(),
});
export type CustomDomainSpec = z.infer<typeof customDomainSpecSchema>;

export const customDomainInputSchema = z
  .object({
    metadata: z.object({
      name: z
        .string()
        .toLowerCase()
        .regex(DOMAIN_PATTERN, 'must be a fully qualified domain name such as app.example.com'),
      displayName: displayNameSchema.optional(),
      externalId: externalIdSchema.optional(),
      labels: labelsSchema.optional(),
    }),
    spec: customDomainSpecInputSchema,
    ...readOnlyEnvelopeFields,
  })
  .meta({ id: 'CustomDomainInput' });

export const customDomainSchema = z
  .object({ metadata: metadataSchema, spec: customDomainSpecSchema, events: z.array(coreEventSchema) })
  .meta({ id: 'CustomDomain' });
export type CustomDomain = z.infer<typeof customDomainSchema>;

export const customDomainRoutes = crudRoutes({
  path: '/v0/customdomains',
  // Not among the reference's paginated lists (control-plane.md \"Pagination\"): a bare array.
  bareList: true,
  param: 'domainName',
  singular: 'CustomDomain',
  plural: 'CustomDomains',
  tag: 'customdomains',
  input: customDomainInputSchema,
  output: customDomainSchema,
});
