import { z } from 'zod';
import { listQuerySchema } from '../pagination.js';
import { defineRoute } from '../route.js';
import { deploymentStatusSchema, envelopeInputSchema, envelopeSchema } from './envelope.js';
import { resourceListQuerySchema, showSecretsQuerySchema } from './resource-query.js';
import { portSchema } from './sandbox.js';
import { crudRoutes, revisionsRoute } from './crud-routes.js';
import {
  envsSchema,
  generationSchema,
  memoryMbSchema,
  referenceListSchema,
  revisionConfigurationSchema,
  revisionMetadataSchema,
  triggersSchema,
} from './workload-common.js';

/** Jobs (reference §1.4, §2.4). Executions are stored here and run by the jobs runtime (a later issue). */
export const jobRuntimeSchema = z.object({
  envs: envsSchema.default([]),
  generation: generationSchema.default('mk3'),
  image: z.string().max(512, 'must be at most 512 characters').optional(),
  memory: memoryMbSchema.default(2048),
  ports: z.array(portSchema).max(10, 'must have at most 10 entries').default([]),
  maxRetries: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(10, 'must be at most 10')
    .default(0),
  /** Seconds per task (reference §2.4; the CLI converts durations to seconds). */
  timeout: z
    .number()
    .int('must be an integer number of seconds')
    .min(1, 'must be at least 1')
    .max(86_400, 'must be at most 86400')
    .default(900),
  diskPercent: z
    .number()
    .int('must be an integer')
    .min(10, 'must be at least 10')
    .max(95, 'must be at most 95')
    .default(50),
});

/** `JobVolume` (reference §2.4): `type` has one value, `ephemeral`. */
export const jobVolumeSchema = z.object({
  name: z.string().min(1, 'must not be empty').max(49, 'must be at most 49 characters'),
  mountPath: z.string().regex(/^\//, 'must be an absolute path').max(1024),
  type: z.literal('ephemeral', { error: 'must be ephemeral' }).default('ephemeral'),
  sizeMb: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(1_048_576, 'must be at most 1048576')
    .optional(),
  readOnly: z.boolean().default(false),
});

export const jobSpecSchema = z.object({
  enabled: z.boolean().default(true),
  region: z.string().max(64, 'must be at most 64 characters').optional(),
  policies: referenceListSchema.default([]),
  revision: revisionConfigurationSchema.optional(),
  runtime: jobRuntimeSchema.default({
    envs: [],
    generation: 'mk3',
    memory: 2048,
    ports: [],
    maxRetries: 0,
    timeout: 900,
    diskPercent: 50,
  }),
  triggers: triggersSchema(['cron']).default([]),
  volumes: z.array(jobVolumeSchema).max(20, 'must have at most 20 entries').default([]),
});
export type JobSpec = z.infer<typeof jobSpecSchema>;

export const jobInputSchema = envelopeInputSchema(jobSpecSchema).meta({ id: 'JobInput' });
export const jobSchema = envelopeSchema(jobSpecSchema, { status: deploymentStatusSchema }).meta({
  id: 'Job',
});
export type Job = z.infer<typeof jobSchema>;

/** Execution status (reference §2.4). */
export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'cancelling',
  'cancelled',
  'failed',
  'succeeded',
  'timeout',
] as const;
export const TASK_STATUSES = [
  'unspecified',
  'pending',
  'reconciling',
  'failed',
  'succeeded',
  'running',
  'cancelled',
] as const;

export const jobExecutionTaskSchema = z
  .object({
    metadata: z.object({
      name: z.string(),
      createdAt: z.string().optional(),
      scheduledAt: z.string().optional(),
      startedAt: z.string().optional(),
      completedAt: z.string().optional(),
      updatedAt: z.string().optional(),
    }),
    spec: z.object({ maxRetries: z.number().int().optional(), timeout: z.string().optional() }),
    status: z.enum(TASK_STATUSES),
    conditions: z.array(z.record(z.string(), z.unknown())),
  })
  .meta({ id: 'JobExecutionTask' });

export const jobExecutionSchema = z
  .object({
    metadata: z.object({
      id: z.string(),
      job: z.string(),
      workspace: z.string(),
      cluster: z.string().optional(),
      createdAt: z.string(),
      updatedAt: z.string(),
      startedAt: z.string().optional(),
      completedAt: z.string().optional(),
      deletedAt: z.string().optional(),
      expiredAt: z.string().optional(),
    }),
    spec: z.object({
      parallelism: z.number().int(),
      tasks: z.array(z.record(z.string(), z.unknown())),
      timeout: z.number().int().optional(),
      /** Values masked `***` (reference §2.4). */
      envOverride: z.record(z.string(), z.string()).optional(),
      memoryOverride: z.number().int().optional(),
    }),
    status: z.enum(EXECUTION_STATUSES),
    stats: z.object({
      total: z.number().int(),
      success: z.number().int(),
      failure: z.number().int(),
      running: z.number().int(),
      retried: z.number().int(),
      cancelled: z.number().int(),
    }),
    tasks: z.array(jobExecutionTaskSchema),
  })
  .meta({ id: 'JobExecution' });
export type JobExecution = z.infer<typeof jobExecutionSchema>;

const base = { path: '/v0/jobs', param: 'jobId', singular: 'Job', tag: 'jobs' } as const;
const executionParams = z.object({ jobId: z.string(), executionId: z.string() });
export const jobRoutes = {
  ...crudRoutes({
    ...base,
    plural: 'Jobs',
    input: jobInputSchema,
    output: jobSchema,
    getQuery: showSecretsQuerySchema,
    listQuery: resourceListQuerySchema(),
  }),
  revisions: revisionsRoute({ ...base, response: revisionMetadataSchema }),
  listExecutions: defineRoute({
    operationId: 'listJobExecutions',
    method: 'get',
    path: '/v0/jobs/{jobId}/executions',
    summary: 'Executions of a job, newest first (reference §1.4)',
    tag: 'jobs',
    auth: 'workspace',
    params: z.object({ jobId: z.string() }),
    query: listQuerySchema,
    response: jobExecutionSchema,
    paginated: true,
    errors: [404],
  }),
  getExecution: defineRoute({
    operationId: 'getJobExecution',
    method: 'get',
    path: '/v0/jobs/{jobId}/executions/{executionId}',
    summary: 'One execution of a job',
    tag: 'jobs',
    auth: 'workspace',
    params: executionParams,
    response: jobExecutionSchema,
    errors: [404],
  }),
};
