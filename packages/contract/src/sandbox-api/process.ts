// Process bodies of the sandbox API (reference sandbox-api.md §1.3).
import * as z from 'zod/mini';

export const processStatusSchema = z.enum(['running', 'completed', 'failed', 'killed', 'stopped']);
export type ProcessStatus = z.infer<typeof processStatusSchema>;

export const processRequestSchema = z.object({
  command: z.string().check(z.minLength(1)),
  name: z.optional(z.string().check(z.minLength(1))),
  workingDir: z.optional(z.string()),
  env: z.optional(z.record(z.string(), z.string())),
  waitForCompletion: z.optional(z.boolean()),
  /** Seconds; a deadline on the wait, see §1.3 "timeout". */
  timeout: z.optional(z.int()),
  waitForPorts: z.optional(z.array(z.int().check(z.minimum(1), z.maximum(65535)))),
  restartOnFailure: z.optional(z.boolean()),
  /** Negative means unlimited. */
  maxRestarts: z.optional(z.int()),
  keepAlive: z.optional(z.boolean()),
  /**
   * Keep a writable stdin pipe open, fed by POST /process/{id}/stdin and closed by DELETE (the
   * vendor SDK's writeStdin/closeStdin; issue 14 item 6). Without it stdin is /dev/null.
   */
  stdin: z.optional(z.boolean()),
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
  completedAt: z.nullable(z.string()),
  exitCode: z.int(),
  logs: z.nullable(z.string()),
  stdout: z.nullable(z.string()),
  stderr: z.nullable(z.string()),
  restartOnFailure: z.boolean(),
  maxRestarts: z.int(),
  restartCount: z.int(),
  keepAlive: z.boolean(),
  /** Started with a writable stdin pipe. */
  stdin: z.optional(z.boolean()),
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
