import { z } from 'zod';
import { deploymentStatusSchema, envelopeInputSchema, envelopeSchema } from './envelope.js';
import { resourceListQuerySchema } from './resource-query.js';
import { crudRoutes, revisionsRoute } from './crud-routes.js';
import { modelUsageRoute } from './model-usage.js';
import { referenceListSchema, revisionMetadataSchema } from './workload-common.js';

/** Model gateway endpoints (spec "Model gateway endpoint"; reference §1.3, §2.2). */
export const MODEL_PROVIDER_TYPES = [
  'hf_private_endpoint',
  'hf_public_endpoint',
  'huggingface',
  'public_model',
  'mcp',
  'openai',
  'anthropic',
  'gemini',
  'mistral',
  'deepseek',
  'cohere',
  'cerebras',
  'xai',
  'vertexai',
  'azure-openai-service',
  'azure-ai-inference',
  'azure-marketplace',
  'groq',
] as const;
/** Flavor types (reference §2.3: `flavors[{name, type: cpu|gpu}]`). */
export const FLAVOR_TYPES = ['cpu', 'gpu'] as const;
export const flavorSchema = z.object({
  name: z.string().min(1, 'must not be empty').max(63, 'must be at most 63 characters'),
  type: z.enum(FLAVOR_TYPES, { error: `must be one of ${FLAVOR_TYPES.join(', ')}` }),
});

export const modelRuntimeSchema = z.object({
  type: z.enum(MODEL_PROVIDER_TYPES, { error: `must be one of ${MODEL_PROVIDER_TYPES.join(', ')}` }),
  model: z.string().max(256, 'must be at most 256 characters').optional(),
  organization: z.string().max(256, 'must be at most 256 characters').optional(),
  endpointName: z.string().max(256, 'must be at most 256 characters').optional(),
  /** Reference §2.2: `generation: mk3|mk2|empty`. */
  generation: z.enum(['mk2', 'mk3', ''], { error: 'must be one of mk2, mk3 or empty' }).optional(),
});

export const modelSpecSchema = z.object({
  enabled: z.boolean().default(true),
  flavors: z.array(flavorSchema).max(20, 'must have at most 20 entries').default([]),
  integrationConnections: referenceListSchema.default([]),
  policies: referenceListSchema.default([]),
  runtime: modelRuntimeSchema,
  /** Use the provider's test credentials (reference §2.2). */
  sandbox: z.boolean().default(false),
});
export type ModelSpec = z.infer<typeof modelSpecSchema>;

export const modelInputSchema = envelopeInputSchema(modelSpecSchema).meta({ id: 'ModelInput' });
export const modelSchema = envelopeSchema(modelSpecSchema, { status: deploymentStatusSchema }).meta({
  id: 'Model',
});
export type Model = z.infer<typeof modelSchema>;

const base = { path: '/v0/models', param: 'modelName', singular: 'Model', tag: 'models' } as const;
export const modelRoutes = {
  ...crudRoutes({
    ...base,
    plural: 'Models',
    input: modelInputSchema,
    output: modelSchema,
    listQuery: resourceListQuerySchema(),
    upsert: true,
  }),
  revisions: revisionsRoute({ ...base, response: revisionMetadataSchema }),
  usage: modelUsageRoute,
};
