// The sandbox API's routes (reference sandbox-api.md; what sandboxd serves at {sandbox_url}) as
// data: the OpenAPI document of the sandbox API is generated from this table and the schemas
// beside it (../sandbox-api-openapi.ts, issue 14 item 9), and sandboxd's own test checks that the
// table and its router list the same routes, so neither drifts from the other.
import * as z from 'zod/mini';
import { sandboxErrorSchema, sandboxHealthSchema, sandboxSuccessSchema } from './common.js';
import {
  contentSearchResponseSchema,
  fileRequestSchema,
  findResponseSchema,
  fuzzySearchResponseSchema,
  multipartCompleteRequestSchema,
  multipartInitiateRequestSchema,
  multipartInitiateResponseSchema,
  multipartPartSchema,
  multipartPartsResponseSchema,
  multipartUploadsResponseSchema,
  sandboxDirectorySchema,
  sandboxFileWithContentSchema,
  treeRequestSchema,
  watchEventSchema,
} from './filesystem.js';
import {
  portMonitorRequestSchema,
  processPortsResponseSchema,
  tunnelConfigRequestSchema,
} from './network.js';
import {
  processLogsSchema,
  processRequestSchema,
  processResponseSchema,
  processStreamEventSchema,
} from './process.js';

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

const flag = z.optional(z.enum(['true', 'false']));
const list = z.optional(z.string());
const searchQuery = z.object({
  patterns: list,
  maxResults: z.optional(z.string()),
  excludeDirs: list,
  excludeHidden: flag,
});
const processArray = z.array(processResponseSchema);

export const sandboxApiError = sandboxErrorSchema;

export const sandboxApiRoutes: readonly SandboxRoute[] = [
  {
    method: 'get',
    path: '/',
    operationId: 'welcome',
    summary: 'Welcome message',
    tag: 'system',
    response: z.object({ message: z.string(), documentation: z.string(), description: z.string() }),
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Daemon health, version and keep-alive process count',
    tag: 'system',
    response: sandboxHealthSchema,
  },

  {
    method: 'get',
    path: '/filesystem/{path}',
    operationId: 'getFileOrDirectory',
    summary:
      'A file with its content, or a directory listing; raw bytes with ?download=true or Accept: application/octet-stream (Range supported)',
    tag: 'filesystem',
    query: z.object({ download: flag }),
    response: z.union([sandboxFileWithContentSchema, sandboxDirectorySchema]),
    errors: [404, 416, 422],
  },
  {
    method: 'put',
    path: '/filesystem/{path}',
    operationId: 'putFileOrDirectory',
    summary: 'Create or overwrite a file (JSON or multipart upload), or create a directory',
    tag: 'filesystem',
    body: fileRequestSchema,
    multipart: true,
    response: sandboxSuccessSchema,
    errors: [400, 413, 422],
  },
  {
    method: 'delete',
    path: '/filesystem/{path}',
    operationId: 'deleteFileOrDirectory',
    summary: 'Delete a file, or a directory (?recursive=true when not empty)',
    tag: 'filesystem',
    query: z.object({ recursive: flag }),
    response: sandboxSuccessSchema,
    errors: [404, 422],
  },
  {
    method: 'get',
    path: '/filesystem/tree',
    operationId: 'getWorkingTree',
    summary: 'The directory tree of the working directory',
    tag: 'filesystem',
    response: sandboxDirectorySchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/filesystem/tree/{path}',
    operationId: 'getTree',
    summary: 'The directory tree under a path',
    tag: 'filesystem',
    response: sandboxDirectorySchema,
    errors: [404],
  },
  {
    method: 'put',
    path: '/filesystem/tree',
    operationId: 'putWorkingTree',
    summary: 'Write many files under the working directory',
    tag: 'filesystem',
    body: treeRequestSchema,
    response: sandboxDirectorySchema,
    errors: [400],
  },
  {
    method: 'put',
    path: '/filesystem/tree/{path}',
    operationId: 'putTree',
    summary: 'Write many files under a path',
    tag: 'filesystem',
    body: treeRequestSchema,
    response: sandboxDirectorySchema,
    errors: [400],
  },
  {
    method: 'delete',
    path: '/filesystem/tree',
    operationId: 'deleteWorkingTree',
    summary: 'Delete the working directory tree',
    tag: 'filesystem',
    query: z.object({ recursive: flag }),
    response: sandboxSuccessSchema,
    errors: [404, 422],
  },
  {
    method: 'delete',
    path: '/filesystem/tree/{path}',
    operationId: 'deleteTree',
    summary: 'Delete a directory tree',
    tag: 'filesystem',
    query: z.object({ recursive: flag }),
    response: sandboxSuccessSchema,
    errors: [404, 422],
  },
  {
    method: 'get',
    path: '/filesystem-find/{path}',
    operationId: 'findFiles',
    summary: 'Find files or directories by glob patterns',
    tag: 'filesystem',
    query: z.extend(searchQuery, { type: z.optional(z.enum(['file', 'directory'])) }),
    response: findResponseSchema,
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/filesystem-search/{path}',
    operationId: 'fuzzySearch',
    summary: 'Fuzzy search of file names',
    tag: 'filesystem',
    query: z.extend(searchQuery, { query: z.string() }),
    response: fuzzySearchResponseSchema,
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/filesystem-content-search/{path}',
    operationId: 'contentSearch',
    summary: 'Search file contents',
    tag: 'filesystem',
    query: z.object({
      query: z.string(),
      caseSensitive: flag,
      maxResults: z.optional(z.string()),
      filePattern: z.optional(z.string()),
      excludeDirs: list,
    }),
    response: contentSearchResponseSchema,
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/watch/filesystem/{path}',
    operationId: 'watchFilesystem',
    summary: 'Stream change events under a directory, one JSON object per line',
    tag: 'filesystem',
    query: z.object({ ignore: list }),
    response: watchEventSchema,
    kind: 'ndjson',
    errors: [404, 429],
  },
  {
    method: 'get',
    path: '/filesystem-multipart',
    operationId: 'listMultipartUploads',
    summary: 'Multipart uploads in progress',
    tag: 'filesystem',
    response: multipartUploadsResponseSchema,
  },
  {
    method: 'post',
    path: '/filesystem-multipart/initiate/{path}',
    operationId: 'initiateMultipartUpload',
    summary: 'Start a multipart upload to a path',
    tag: 'filesystem',
    body: multipartInitiateRequestSchema,
    response: multipartInitiateResponseSchema,
    errors: [400],
  },
  {
    method: 'put',
    path: '/filesystem-multipart/{id}/part',
    operationId: 'uploadPart',
    summary: 'Upload one part (raw bytes or multipart), ?partNumber=1..10000',
    tag: 'filesystem',
    query: z.object({ partNumber: z.string() }),
    multipart: true,
    response: multipartPartSchema,
    errors: [400, 404, 413],
  },
  {
    method: 'post',
    path: '/filesystem-multipart/{id}/complete',
    operationId: 'completeMultipartUpload',
    summary: 'Assemble the parts into the file',
    tag: 'filesystem',
    body: multipartCompleteRequestSchema,
    response: sandboxSuccessSchema,
    errors: [400, 404],
  },
  {
    method: 'delete',
    path: '/filesystem-multipart/{id}/abort',
    operationId: 'abortMultipartUpload',
    summary: 'Abort a multipart upload',
    tag: 'filesystem',
    response: sandboxSuccessSchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/filesystem-multipart/{id}/parts',
    operationId: 'listUploadedParts',
    summary: 'Parts uploaded so far',
    tag: 'filesystem',
    response: multipartPartsResponseSchema,
    errors: [404],
  },

  {
    method: 'post',
    path: '/process',
    operationId: 'executeProcess',
    summary: 'Run a command through the shell; Accept: text/event-stream streams its output as JSON lines',
    tag: 'process',
    body: processRequestSchema,
    response: processResponseSchema,
    errors: [400, 409, 429],
  },
  {
    method: 'get',
    path: '/process',
    operationId: 'listProcesses',
    summary: 'Every process of the sandbox',
    tag: 'process',
    response: processArray,
  },
  {
    method: 'get',
    path: '/process/{id}',
    operationId: 'getProcess',
    summary: 'A process by PID or name',
    tag: 'process',
    response: processResponseSchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/process/{id}/logs',
    operationId: 'getProcessLogs',
    summary: 'The output of a process',
    tag: 'process',
    response: processLogsSchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/process/{id}/logs/stream',
    operationId: 'streamProcessLogs',
    summary: 'Follow the output of a process, one JSON object per line',
    tag: 'process',
    response: processStreamEventSchema,
    kind: 'ndjson',
    errors: [404, 429],
  },
  {
    method: 'delete',
    path: '/process/{id}',
    operationId: 'stopProcess',
    summary: 'Stop a process (SIGTERM)',
    tag: 'process',
    response: sandboxSuccessSchema,
    errors: [404],
  },
  {
    method: 'post',
    path: '/process/{id}/stdin',
    operationId: 'writeProcessStdin',
    summary: 'Write the body to the stdin of a process started with `stdin: true`',
    tag: 'process',
    response: sandboxSuccessSchema,
    errors: [404, 409, 413, 503],
  },
  {
    method: 'delete',
    path: '/process/{id}/stdin',
    operationId: 'closeProcessStdin',
    summary: 'Close the stdin of a process (it reads end of file)',
    tag: 'process',
    response: sandboxSuccessSchema,
    errors: [404, 409],
  },
  {
    method: 'delete',
    path: '/process/{id}/kill',
    operationId: 'killProcess',
    summary: 'Kill a process (SIGKILL)',
    tag: 'process',
    response: sandboxSuccessSchema,
    errors: [404],
  },

  {
    method: 'get',
    path: '/network/process/{pid}/ports',
    operationId: 'getProcessPorts',
    summary: 'Ports a process listens on',
    tag: 'network',
    response: processPortsResponseSchema,
    errors: [400, 404],
  },
  {
    method: 'post',
    path: '/network/process/{pid}/monitor',
    operationId: 'monitorProcessPorts',
    summary: 'Call back a URL when the process opens a port',
    tag: 'network',
    body: portMonitorRequestSchema,
    response: sandboxSuccessSchema,
    errors: [400, 404],
  },
  {
    method: 'delete',
    path: '/network/process/{pid}/monitor',
    operationId: 'stopMonitoringProcessPorts',
    summary: 'Stop the port monitor of a process',
    tag: 'network',
    response: sandboxSuccessSchema,
    errors: [404],
  },
  {
    method: 'put',
    path: '/network/tunnel/config',
    operationId: 'configureTunnel',
    summary: 'Send egress through a WireGuard tunnel (base64 JSON config)',
    tag: 'network',
    body: tunnelConfigRequestSchema,
    response: sandboxSuccessSchema,
    errors: [400, 501],
  },
  {
    method: 'delete',
    path: '/network/tunnel',
    operationId: 'disconnectTunnel',
    summary: 'Cut the sandbox egress (the tunnel)',
    tag: 'network',
    response: sandboxSuccessSchema,
    errors: [501],
  },

  {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    summary:
      'MCP over streamable HTTP (stateless, JSON responses): process, filesystem and search tools; Host/Origin checked against DNS rebinding (403)',
    tag: 'mcp',
    body: z.record(z.string(), z.unknown()),
    response: z.record(z.string(), z.unknown()),
    errors: [403, 405],
  },

  {
    method: 'get',
    path: '/terminal',
    operationId: 'terminalPage',
    summary: 'A browser terminal page; its WebSocket is /terminal/ws',
    tag: 'terminal',
    kind: 'html',
    errors: [404],
  },
];
