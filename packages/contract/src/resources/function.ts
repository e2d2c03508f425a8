import { z } from 'zod';
import { deploymentStatusSchema, envelopeInputSchema, envelopeSchema } from './envelope.js';
import { resourceListQuerySchema, showSecretsQuerySchema } from './resource-query.js';
import { portSchema } from './sandbox.js';
import { crudRoutes, replicaLogsRoute, revisionsRoute } from './crud-routes.js';
import {
  referenceListSchema,
  revisionConfigurationSchema,
  revisionMetadataSchema,
  scaledRuntimeShape,
  scaleBoundsCheck,
  triggersSchema,
} from './workload-common.js';

/** Functions are MCP servers (spec "Integration connection and function"; reference §1.2, §2.1). */
export const FUNCTION_TRANSPORTS = ['websocket', 'http-stream'] as const;

export const functionRuntimeSchema = z
  .object({
    /** The CLI sets `mcp` (reference §2.2); the only kind of function. */
    type: z.literal('mcp', { error: 'must be mcp' }).default('mcp'),
    ...scaledRuntimeShape,
    ports: z.array(portSchema).max(10, 'must have at most 10 entries').default([]),
    transport: z
      .enum(FUNCTION_TRANSPORTS, { error: `must be one of ${FUNCTION_TRANSPORTS.join(', ')}` })
      .default('http-stream'),
  })
  .refine(...scaleBoundsCheck);

const defaultRuntime = {
  type: 'mcp',
  envs: [],
  generation: 'mk3',
  memory: 2048,
  minScale: 0,
  maxScale: 10,
  ports: [],
  transport: 'http-stream',
} as const;

export const functionSpecSchema = z.object({
  type: z.literal('mcp', { error: 'must be mcp' }).default('mcp'),
  enabled: z.boolean().default(true),
  public: z.boolean().default(false),
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  integrationConnections: referenceListSchema.default([]),
  policies: referenceListSchema.default([]),
  revision: revisionConfigurationSchema.optional(),
  runtime: functionRuntimeSchema.default({ ...defaultRuntime, envs: [], ports: [] }),
  triggers: triggersSchema(['http']).default([]),
});
export type FunctionSpec = z.infer<typeof functionSpecSchema>;

export const functionInputSchema = envelopeInputSchema(functionSpecSchema).meta({ id: 'FunctionInput' });
export const functionSchema = envelopeSchema(functionSpecSchema, { status: deploymentStatusSchema }).meta({
  id: 'Function',
});
export type FunctionResource = z.infer<typeof functionSchema>;

const base = {
  path: '/v0/functions',
  param: 'functionName',
  singular: 'Function',
  tag: 'functions',
} as const;
export const functionRoutes = {
  ...crudRoutes({
    ...base,
    plural: 'Functions',
    upload: true,
    input: functionInputSchema,
    output: functionSchema,
    getQuery: showSecretsQuerySchema,
    listQuery: resourceListQuerySchema(),
  }),
  revisions: revisionsRoute({ ...base, response: revisionMetadataSchema }),
  replicaLogs: replicaLogsRoute(base),
};
