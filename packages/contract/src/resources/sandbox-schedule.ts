import { z } from 'zod';
import { nameSchema, timestampSchema } from '../common.js';
import { defineRoute } from '../route.js';

/**
 * Sandbox schedules (reference control-plane §1.6 and `SandboxScheduleEntry`; sandbox-api §2.4
 * "Schedules"): a `cron` (5 fields, UTC), `at` (RFC 3339) or `sleep` (a duration, turned into `at`
 * on create) entry that starts a process inside the sandbox, like `POST /process` does. Executions
 * are recorded newest first; `status`/`statusCode` say whether the submit was accepted, and
 * `processStatus`/`exitCode`/`output` what the process did (filled in once it ends).
 */

export const SCHEDULE_TYPES = ['cron', 'at', 'sleep'] as const;
/** Most execution records one schedule keeps (the oldest go first); the reference's default is 100. */
export const MAX_SCHEDULE_EXECUTIONS = 1000;
export const DEFAULT_SCHEDULE_EXECUTIONS = 100;
/** Seconds; the reference's default process timeout; 0 means none. */
export const DEFAULT_SCHEDULE_TIMEOUT = 600;

export const scheduleInputSchema = z.object({
  command: z.string().min(1, 'must not be empty').max(8192, 'must be at most 8192 characters'),
  env: z
    .record(
      z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
        .max(256, 'must be at most 256 characters'),
      z.string().max(8192, 'must be at most 8192 characters'),
    )
    .refine((env) => Object.keys(env).length <= 64, 'at most 64 variables')
    .optional(),
  keepAlive: z.boolean().optional().meta({ description: 'Keep the sandbox out of STANDBY while it runs.' }),
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$/, 'must be letters, digits, ".", "_" or "-" (at most 48)')
    .optional()
    .meta({ description: 'Prefix of each execution’s process name (a suffix keeps names unique).' }),
  timeout: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(86_400, 'must be at most 86400')
    .optional()
    .meta({ description: `Seconds; default ${DEFAULT_SCHEDULE_TIMEOUT}; 0 means no timeout.` }),
  workingDir: z.string().max(1024, 'must be at most 1024 characters').optional(),
});
export type ScheduleInput = z.infer<typeof scheduleInputSchema>;

/** Create and update body; `createdAt` and `sandbox` are read-only and ignored. */
export const scheduleEntryInputSchema = z
  .object({
    id: nameSchema.optional().meta({ description: 'Unique in the sandbox; generated when omitted.' }),
    type: z.enum(SCHEDULE_TYPES, { error: `must be one of ${SCHEDULE_TYPES.join(', ')}` }),
    value: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters').meta({
      description: 'cron: 5 fields, UTC; at: RFC 3339 time; sleep: a duration such as 30s, 5m, 2h.',
    }),
    input: scheduleInputSchema,
    maxExecutions: z
      .number()
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(MAX_SCHEDULE_EXECUTIONS, `must be at most ${MAX_SCHEDULE_EXECUTIONS}`)
      .optional(),
  })
  .meta({ id: 'SandboxScheduleEntryInput' });
export type ScheduleEntryInput = z.infer<typeof scheduleEntryInputSchema>;

export const scheduleEntrySchema = z
  .object({
    id: z.string(),
    type: z.enum(['cron', 'at']),
    value: z.string(),
    input: scheduleInputSchema,
    maxExecutions: z.number().int(),
    sandbox: z.string(),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
    nextRunAt: timestampSchema.nullable().meta({ description: 'Null once an `at` entry has fired.' }),
    lastRunAt: timestampSchema.nullable(),
  })
  .meta({ id: 'SandboxScheduleEntry' });
export type ScheduleEntry = z.infer<typeof scheduleEntrySchema>;

export const scheduleExecutionSchema = z
  .object({
    id: z.string(),
    scheduleId: z.string(),
    sandbox: z.string(),
    executedAt: timestampSchema,
    createdAt: timestampSchema,
    processName: z.string(),
    status: z.enum(['succeeded', 'failed']).meta({ description: 'Whether the submit was accepted.' }),
    statusCode: z.number().int().meta({ description: 'HTTP status of the submit; 0 if unreachable.' }),
    error: z.string(),
    timeout: z.number().int(),
    processStatus: z
      .enum(['running', 'completed', 'failed', 'killed', 'stopped', 'unknown'])
      .nullable()
      .meta({ description: 'running until the process ends; null when it never started.' }),
    exitCode: z.number().int().nullable(),
    completedAt: timestampSchema.nullable(),
    output: z.string().meta({ description: 'The process’s combined output, its last 16 KiB at most.' }),
  })
  .meta({ id: 'SandboxScheduleExecution' });
export type ScheduleExecution = z.infer<typeof scheduleExecutionSchema>;

/** Schedules list: reference §1.6 "limit (default 20, maximum 100), cursor, sort, q and type". */
export const scheduleListQuerySchema = z.object({
  cursor: z.string().max(2048).optional(),
  limit: z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(20),
  sort: z
    .enum(['createdAt:desc', 'createdAt:asc'], { error: 'must be createdAt:desc or createdAt:asc' })
    .default('createdAt:desc'),
  q: z.string().max(200, 'must be at most 200 characters').optional(),
  type: z.enum(['cron', 'at'], { error: 'must be cron or at' }).optional(),
});

export const executionListQuerySchema = scheduleListQuerySchema.omit({ type: true });

const TAG = 'compute';
const sandboxParam = z.object({ sandboxName: z.string() });
const scheduleParam = z.object({ sandboxName: z.string(), scheduleId: z.string() });

export const scheduleRoutes = {
  listSchedules: defineRoute({
    operationId: 'listSandboxSchedules',
    method: 'get',
    path: '/v0/sandboxes/{sandboxName}/schedules',
    summary: 'Schedules of a sandbox',
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    query: scheduleListQuerySchema,
    response: scheduleEntrySchema,
    paginated: true,
    errors: [400, 404],
  }),
  createSchedule: defineRoute({
    operationId: 'createSandboxSchedule',
    method: 'post',
    path: '/v0/sandboxes/{sandboxName}/schedules',
    summary: 'Create a schedule that runs a process in the sandbox (cron, at or sleep)',
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    body: scheduleEntryInputSchema,
    response: scheduleEntrySchema,
    errors: [400, 404, 409],
  }),
  getSchedule: defineRoute({
    operationId: 'getSandboxSchedule',
    method: 'get',
    path: '/v0/sandboxes/{sandboxName}/schedules/{scheduleId}',
    summary: 'Get a schedule',
    tag: TAG,
    auth: 'workspace',
    params: scheduleParam,
    response: scheduleEntrySchema,
    errors: [404],
  }),
  updateSchedule: defineRoute({
    operationId: 'updateSandboxSchedule',
    method: 'put',
    path: '/v0/sandboxes/{sandboxName}/schedules/{scheduleId}',
    summary: 'Replace a schedule; its id is immutable and its next run is computed again',
    tag: TAG,
    auth: 'workspace',
    params: scheduleParam,
    body: scheduleEntryInputSchema,
    response: scheduleEntrySchema,
    errors: [400, 404],
  }),
  deleteSchedule: defineRoute({
    operationId: 'deleteSandboxSchedule',
    method: 'delete',
    path: '/v0/sandboxes/{sandboxName}/schedules/{scheduleId}',
    summary: 'Delete a schedule (its execution records stay until the sandbox goes); returns it',
    tag: TAG,
    auth: 'workspace',
    params: scheduleParam,
    response: scheduleEntrySchema,
    errors: [404],
  }),
  listScheduleExecutions: defineRoute({
    operationId: 'listSandboxScheduleExecutions',
    method: 'get',
    path: '/v0/sandboxes/{sandboxName}/schedule-executions',
    summary: 'Executions of every schedule of the sandbox, newest first',
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    query: executionListQuerySchema,
    response: scheduleExecutionSchema,
    paginated: true,
    errors: [400, 404],
  }),
} as const;
