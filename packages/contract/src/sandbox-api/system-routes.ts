// The sandbox API's system routes (routes.ts): the welcome message and the daemon's health.
import * as z from 'zod/mini';
import { sandboxHealthSchema } from './common.js';
import type { SandboxRoute } from './route-spec.js';

export const systemRoutes: readonly SandboxRoute[] = [
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
];
