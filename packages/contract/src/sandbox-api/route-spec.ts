// One route of the sandbox API table (routes.ts): the shape every area's route file fills in.
import type * as z from 'zod/mini';

/** How a success answers: a JSON body, a stream of JSON lines, raw bytes, or HTML. */
export type SandboxResponseKind = 'json' | 'ndjson' | 'bytes' | 'html';

export interface SandboxRoute {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI path; `{path}` may contain '/' (a file path, absolute when it starts with %2F). */
  path: string;
  operationId: string;
  summary: string;
  tag: 'system' | 'filesystem' | 'process' | 'network' | 'mcp' | 'terminal';
  query?: z.ZodMiniObject;
  body?: z.ZodMiniType;
  /** A multipart/form-data body (`file` field) is accepted as well as JSON. */
  multipart?: boolean;
  response?: z.ZodMiniType;
  kind?: SandboxResponseKind;
  /** Error statuses besides 401 (no or wrong gateway credentials); bodies are `{error}`. */
  errors?: number[];
}
