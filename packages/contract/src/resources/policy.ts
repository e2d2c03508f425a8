import { z } from 'zod';
import { defineRoute } from '../route.js';
import { envelopeInputSchema, envelopeSchema } from './envelope.js';
import { crudRoutes } from './crud-routes.js';
import { flavorSchema } from './model.js';

/** Policies (reference §1.12, §2.3): location, flavor and token-budget rules attached by name. */
export const POLICY_TYPES = ['location', 'flavor', 'maxToken'] as const;
export const POLICY_LOCATION_TYPES = ['location', 'country', 'continent'] as const;
export const POLICY_RESOURCE_TYPES = ['model', 'function', 'agent', 'sandbox', 'application'] as const;
export const TOKEN_GRANULARITIES = ['month', 'day', 'hour', 'minute'] as const;

const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });
const tokenCount = z.number().int('must be an integer').min(0, 'must be at least 0 (0 disables the check)');

export const policySpecSchema = z
  .object({
    type: z.enum(POLICY_TYPES, oneOf(POLICY_TYPES)),
    locations: z
      .array(
        z.object({
          name: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
          type: z.enum(POLICY_LOCATION_TYPES, oneOf(POLICY_LOCATION_TYPES)),
        }),
      )
      .max(100, 'must have at most 100 entries')
      .default([]),
    flavors: z.array(flavorSchema).max(100, 'must have at most 100 entries').default([]),
    maxTokens: z
      .object({
        granularity: z.enum(TOKEN_GRANULARITIES, oneOf(TOKEN_GRANULARITIES)),
        step: z.number().int('must be an integer').min(2, 'must be greater than 1').default(2),
        input: tokenCount.default(0),
        output: tokenCount.default(0),
        total: tokenCount.default(0),
        ratioInputOverOutput: z.number().min(0, 'must be at least 0').optional(),
      })
      .optional(),
    resourceTypes: z
      .array(z.enum(POLICY_RESOURCE_TYPES, oneOf(POLICY_RESOURCE_TYPES)))
      .max(5)
      .default([...POLICY_RESOURCE_TYPES]),
    sandbox: z.boolean().default(false),
  })
  .superRefine((spec, ctx) => {
    // Each type carries its own rule (reference §2.3); a policy without one would match nothing.
    if (spec.type === 'location' && spec.locations.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['locations'],
        message: 'must not be empty for a location policy',
      });
    if (spec.type === 'flavor' && spec.flavors.length === 0)
      ctx.addIssue({ code: 'custom', path: ['flavors'], message: 'must not be empty for a flavor policy' });
    if (spec.type === 'maxToken' && !spec.maxTokens)
      ctx.addIssue({ code: 'custom', path: ['maxTokens'], message: 'is required for a maxToken policy' });
  });
export type PolicySpec = z.infer<typeof policySpecSchema>;

const usageCounts = z.object({
  agents: z.number().int(),
  functions: z.number().int(),
  jobs: z.number().int(),
  models: z.number().int(),
  sandboxes: z.number().int(),
});
export const policyInputSchema = envelopeInputSchema(policySpecSchema).meta({ id: 'PolicyInput' });
export const policySchema = envelopeSchema(policySpecSchema, { usage: usageCounts }).meta({ id: 'Policy' });
export type Policy = z.infer<typeof policySchema>;

export const policyUsagesSchema = z
  .object({
    agents: z.array(z.string()),
    functions: z.array(z.string()),
    jobs: z.array(z.string()),
    models: z.array(z.string()),
    sandboxes: z.array(z.string()),
  })
  .meta({ id: 'PolicyUsages' });
export type PolicyUsages = z.infer<typeof policyUsagesSchema>;

export const policyRoutes = {
  ...crudRoutes({
    path: '/v0/policies',
    param: 'policyName',
    singular: 'Policy',
    plural: 'Policies',
    tag: 'policies',
    input: policyInputSchema,
    output: policySchema,
  }),
  usages: defineRoute({
    operationId: 'getPolicyUsages',
    method: 'get',
    path: '/v0/policies/{policyName}/usages',
    summary: 'Names of the workloads that reference this policy',
    tag: 'policies',
    auth: 'workspace',
    params: z.object({ policyName: z.string() }),
    response: policyUsagesSchema,
    errors: [404],
  }),
};
