import { z } from 'zod';
import { deploymentStatusSchema, envelopeInputSchema, envelopeSchema } from './envelope.js';
import { resourceListQuerySchema, showSecretsQuerySchema } from './resource-query.js';
import { crudRoutes, replicaLogsRoute, revisionsRoute } from './crud-routes.js';
import {
  referenceListSchema,
  revisionConfigurationSchema,
  revisionMetadataSchema,
  scaledRuntimeShape,
  scaleBoundsCheck,
  triggersSchema,
  volumeAttachmentSchema,
} from './workload-common.js';

/** Agent spec (spec "Agent"; reference §2.1 `AgentSpec`, `AgentRuntime`). */
export const agentRuntimeSchema = z
  .object({
    ...scaledRuntimeShape,
  })
  .refine(...scaleBoundsCheck);

export const agentSpecSchema = z
  .object({
    enabled: z.boolean().default(true),
    public: z.boolean().default(false),
    region: z.string().max(64, 'must be at most 64 characters').optional(),
    policies: referenceListSchema.default([]),
    repository: z.object({ type: z.string().max(32), url: z.string().max(1024) }).optional(),
    revision: revisionConfigurationSchema.optional(),
    volumes: z.array(volumeAttachmentSchema).max(20, 'must have at most 20 entries').default([]),
    runtime: agentRuntimeSchema.default({
      envs: [],
      generation: 'mk3',
      memory: 2048,
      minScale: 0,
      maxScale: 10,
    }),
    triggers: triggersSchema(['http', 'http-async']).default([]),
  })
  .refine((s) => s.volumes.length === 0 || s.region !== undefined, {
    path: ['region'],
    message: 'is required when volumes are set',
  });
export type AgentSpec = z.infer<typeof agentSpecSchema>;

export const agentInputSchema = envelopeInputSchema(agentSpecSchema).meta({ id: 'AgentInput' });
export const agentSchema = envelopeSchema(agentSpecSchema, { status: deploymentStatusSchema }).meta({
  id: 'Agent',
});
export type Agent = z.infer<typeof agentSchema>;

const base = { path: '/v0/agents', param: 'agentName', singular: 'Agent', tag: 'agents' } as const;
export const agentRoutes = {
  ...crudRoutes({
    ...base,
    plural: 'Agents',
    upload: true,
    input: agentInputSchema,
    output: agentSchema,
    getQuery: showSecretsQuerySchema,
    listQuery: resourceListQuerySchema(),
  }),
  revisions: revisionsRoute({ ...base, response: revisionMetadataSchema }),
  replicaLogs: replicaLogsRoute(base),
};
