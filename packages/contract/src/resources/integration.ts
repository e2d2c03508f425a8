import { z } from 'zod';
import { nameSchema } from '../common.js';
import { envelopeInputSchema, envelopeSchema } from './envelope.js';
import { crudRoutes } from './crud-routes.js';

/**
 * Integration connections: stored credentials for third-party services (spec "Integration
 * connection and function"; reference §1.11). `spec.secret` values are encrypted at rest and
 * masked in every response.
 */
const secretKeySchema = z
  .string()
  .regex(
    /^[A-Z][A-Z0-9_]{0,63}$/,
    'secret keys must be upper-case names such as CLIENT_ID or OPENAI_API_KEY',
  );

export const integrationConnectionSpecSchema = z.object({
  /** Integration kind, e.g. openai, anthropic, github, slack (reference §1.11). */
  integration: nameSchema,
  config: z.record(z.string().max(64), z.string().max(4096, 'must be at most 4096 characters')).default({}),
  secret: z
    .record(secretKeySchema, z.string().max(16_384, 'must be at most 16384 characters'))
    .refine((s) => Object.keys(s).length <= 50, 'must have at most 50 keys')
    .default({}),
  sandbox: z.boolean().default(false),
});
export type IntegrationConnectionSpec = z.infer<typeof integrationConnectionSpecSchema>;

export const integrationConnectionInputSchema = envelopeInputSchema(integrationConnectionSpecSchema).meta({
  id: 'IntegrationConnectionInput',
});
export const integrationConnectionSchema = envelopeSchema(integrationConnectionSpecSchema, {}).meta({
  id: 'IntegrationConnection',
});
export type IntegrationConnection = z.infer<typeof integrationConnectionSchema>;

export const integrationConnectionRoutes = crudRoutes({
  path: '/v0/integrations/connections',
  // Not among the reference's paginated lists (control-plane.md \"Pagination\"): a bare array.
  bareList: true,
  param: 'connectionName',
  singular: 'IntegrationConnection',
  plural: 'IntegrationConnections',
  tag: 'integrations',
  input: integrationConnectionInputSchema,
  output: integrationConnectionSchema,
});
