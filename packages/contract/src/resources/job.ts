import { z } from 'zod';
import { listQuerySchema, offsetQuerySchema } from '../pagination.js';
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
  /**
   * Legacy (removed from the API in 2026-04, still written by project files, reference §2.4 and §6):
   * the default `parallelism` of this job's executions.
   */
  maxConcurrentTasks: z.number().int('must be an integer').min(1, 'must be at least 1').max(1000).optional(),
});

/** Where the task runtime mounts its own filesystems: a volume over them would replace them. */
const RESERVED_MOUNTS = ['/proc', '/sys', '/dev'];

/** Why a job volume's mount path is refused, or undefined: absolute, normalized, not over the runtime's. */
export function jobMountPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path';
  if (path.split('/').some((part) => part === '..' || part === '.')) return 'must not contain . or ..';
  if (path !== '/' && (path.includes('//') || path.endsWith('/')))
    return 'must be a normalized path (no //, no trailing /)';
  if (/[\s\0]/.test(path)) return 'must not contain spaces or control characters';
  if (RESERVED_MOUNTS.some((r) => path === r || path.startsWith(`${r}/`)))
    return `must not be under ${RESERVED_MOUNTS.join(', ')}`;
  return undefined;
}

/**
 * `JobVolume` (reference §2.4): `type` has one value, `ephemeral` — every task attempt gets a fresh
 * one (planes/jobs task-volumes.ts); `name` labels it and never selects other storage.
 */
export const jobVolumeSchema = z.object({
  name: z
    .string()
    .min(1, 'must not be empty')
    .max(49, 'must be at most 49 characters')
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and dashes'),
  mountPath: z
    .string()
    .max(1024, 'must be at most 1024 characters')
    .superRefine((path, ctx) => {
      const problem = jobMountPathProblem(path);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
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
  volumes: z
    .array(jobVolumeSchema)
    .max(20, 'must have at most 20 entries')
    .superRefine((volumes, ctx) => {
      const paths = volumes.map((v) => v.mountPath);
      const names = volumes.map((v) => v.name);
      for (const [i, v] of volumes.entries()) {
        if (paths.indexOf(v.mountPath) !== i)
          ctx.addIssue({ code: 'custom', path: [i, 'mountPath'], message: 'is mounted twice' });
        if (names.indexOf(v.name) !== i)
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'is used twice' });
      }
    })
    .default([]),
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

/** Most tasks one execution may carry (and the body bound of a create). */
export const MAX_EXECUTION_TASKS = 1000;
/** Parallelism when neither the request nor the job's legacy `maxConcurrentTasks` says (issue 17). */
export const DEFAULT_PARALLELISM = 10;

/** `CreateJobExecutionRequest` (reference §2.4). `jobId`/`workspaceId` are accepted and ignored (the path says). */
export const createJobExecutionRequestSchema = z
  .object({
    tasks: z
      .array(z.record(z.string(), z.unknown()))
      .max(MAX_EXECUTION_TASKS, `must have at most ${MAX_EXECUTION_TASKS} entries`)
      .default([]),
    env: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
        z.string().max(32_768, 'must be at most 32768 characters'),
      )
      .optional(),
    memory: memoryMbSchema.optional(),
    /** Idempotency key: the same `id` twice answers the first execution (reference §2.4). */
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lowercase letters, digits or dashes')
      .optional(),
    executionId: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lowercase letters, digits or dashes')
      .optional(),
    jobId: z.string().optional(),
    workspaceId: z.string().optional(),
    allowQueue: z.boolean().default(true),
    /**
     * Seconds the whole execution may take from its creation, reported as JobExecution
     * `spec.timeout` (reference §2.4); default the platform's (TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS).
     * Past it running tasks are stopped, none start, and the execution ends `timeout`.
     */
    timeout: z
      .number()
      .int('must be an integer number of seconds')
      .min(1, 'must be at least 1')
      .max(604_800, 'must be at most 604800')
      .optional(),
    /** Tasks running at once; default the job's legacy `runtime.maxConcurrentTasks`, else 10. */
    parallelism: z.number().int('must be an integer').min(1, 'must be at least 1').max(1000).optional(),
  })
  .meta({ id: 'CreateJobExecutionRequest' });
export type CreateJobExecutionRequest = z.infer<typeof createJobExecutionRequestSchema>;

export const createJobExecutionOutputSchema = z
  .object({
    id: z.string(),
    executionId: z.string(),
    jobId: z.string(),
    workspaceId: z.string(),
    tasks: z.array(z.record(z.string(), z.unknown())),
  })
  .meta({ id: 'CreateJobExecutionOutput' });
export type CreateJobExecutionOutput = z.infer<typeof createJobExecutionOutputSchema>;

/** One page of a task's output (tarmac logs job): `next` is the offset to ask from to follow. */
export const jobTaskLogsSchema = z
  .object({
    task: z.string(),
    status: z.enum(TASK_STATUSES),
    text: z.string(),
    next: z.number().int(),
    done: z.boolean(),
  })
  .meta({ id: 'JobTaskLogs' });
export type JobTaskLogs = z.infer<typeof jobTaskLogsSchema>;

const base = { path: '/v0/jobs', param: 'jobId', singular: 'Job', tag: 'jobs' } as const;
const executionParams = z.object({ jobId: z.string(), executionId: z.string() });
export const jobRoutes = {
  ...crudRoutes({
    ...base,
    plural: 'Jobs',
    upload: true,
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
    // Before 2026-04-28: limit (default 20, max 100) and offset (reference §1.4).
    legacyQuery: offsetQuerySchema({ defaultLimit: 20, maxLimit: 100 }),
    response: jobExecutionSchema,
    paginated: true,
    errors: [404],
  }),
  createExecution: defineRoute({
    operationId: 'createJobExecution',
    method: 'post',
    path: '/v0/jobs/{jobId}/executions',
    summary: 'Start an execution of a job (reference §1.4, §2.4)',
    tag: 'jobs',
    auth: 'workspace',
    params: z.object({ jobId: z.string() }),
    body: createJobExecutionRequestSchema,
    response: createJobExecutionOutputSchema,
    errors: [400, 404, 429],
  }),
  /** The data-plane trigger (spec "Inference endpoints": `{base_url}/{ws}/jobs/{name}/executions`). */
  triggerExecution: defineRoute({
    operationId: 'triggerJobExecution',
    method: 'post',
    path: '/{workspace}/jobs/{jobId}/executions',
    summary: 'Start an execution of a job on its URL',
    tag: 'jobs',
    auth: 'workspace',
    params: z.object({ workspace: z.string(), jobId: z.string() }),
    body: createJobExecutionRequestSchema,
    response: createJobExecutionOutputSchema,
    errors: [400, 404, 429],
  }),
  cancelExecution: defineRoute({
    operationId: 'deleteJobExecution',
    method: 'delete',
    path: '/v0/jobs/{jobId}/executions/{executionId}',
    summary: 'Cancel an execution: cancelling, then cancelled (reference §1.4)',
    tag: 'jobs',
    auth: 'workspace',
    params: executionParams,
    response: jobExecutionSchema,
    errors: [404],
  }),
  listExecutionTasks: defineRoute({
    operationId: 'listJobExecutionTasks',
    method: 'get',
    path: '/v0/jobs/{jobId}/executions/{executionId}/tasks',
    summary: 'Tasks of an execution (reference §1.4)',
    tag: 'jobs',
    auth: 'workspace',
    params: executionParams,
    query: listQuerySchema,
    response: jobExecutionTaskSchema,
    paginated: true,
    errors: [404],
  }),
  taskLogs: defineRoute({
    operationId: 'getJobExecutionTaskLogs',
    method: 'get',
    path: '/v0/jobs/{jobId}/executions/{executionId}/tasks/{taskId}/logs',
    summary: "A task's output (stdout and stderr of its attempts), from byte `offset`",
    tag: 'jobs',
    auth: 'workspace',
    params: executionParams.extend({ taskId: z.string() }),
    query: z.object({
      offset: z.coerce.number().int('must be an integer').min(0, 'must be at least 0').default(0),
    }),
    response: jobTaskLogsSchema,
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
