// The sandbox API's process routes (routes.ts): run, list, logs, stdin, stop and kill.
import * as z from 'zod/mini';
import { sandboxSuccessSchema } from './common.js';
import {
  processLogsSchema,
  processRequestSchema,
  processResponseSchema,
  processStreamEventSchema,
} from './process.js';
import type { SandboxRoute } from './route-spec.js';

const processArray = z.array(processResponseSchema);
export const processRoutes: readonly SandboxRoute[] = [
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
];
