// Process bodies of the sandbox API (reference sandbox-api.md §1.3).
import { z } from 'zod';

export const processStatusSchema = z.enum(['running', 'completed', 'failed', 'killed', 'stopped']);
export type ProcessStatus = z.infer<typeof processStatusSchema>;

export const processRequestSchema = z.object({
  command: z.string().min(1),
  name: z.string().min(1).optional(),
  workingDir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  waitForCompletion: z.boolean().optional(),
  /** Seconds; a deadline on the wait, see §1.3 "timeout". */
  timeout: z.number().int().optional(),
  waitForPorts: z.array(z.number().int().min(1).max(65535)).optional(),
  restartOnFailure: z.boolean().optional(),
  /** Negative means unlimited. */
  maxRestarts: z.number().int().optional(),
  keepAlive: z.boolean().optional(),
});
export type ProcessRequest = z.infer<typeof processRequestSchema>;

/** Times are HTTP-date style ("Mon, 02 Jan 2006 15:04:05 GMT"). */
export const processResponseSchema = z.object({
  pid: z.string(),
  name: z.string(),
  command: z.string(),
  workingDir: z.string(),
  status: processStatusSchema,
  startedAt: z.string(),
  completedAt: z.string().nullable(),
  exitCode: z.number().int(),
  logs: z.string().nullable(),
  stdout: z.string().nullable(),
  stderr: z.string().nullable(),
  restartOnFailure: z.boolean(),
  maxRestarts: z.number().int(),
  restartCount: z.number().int(),
  keepAlive: z.boolean(),
});
export type ProcessResponse = z.infer<typeof processResponseSchema>;

export const processLogsSchema = z.object({ stdout: z.string(), stderr: z.string(), logs: z.string() });
export type ProcessLogs = z.infer<typeof processLogsSchema>;

/** One NDJSON line of a streamed exec; `result.data` is the final ProcessResponse as JSON. */
export const processStreamEventSchema = z.object({
  type: z.enum(['stdout', 'stderr', 'keepalive', 'result', 'error']),
  data: z.string(),
});
export type ProcessStreamEvent = z.infer<typeof processStreamEventSchema>;
