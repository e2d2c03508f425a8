// The sandbox API's terminal routes (routes.ts): the browser terminal page.
import type { SandboxRoute } from './route-spec.js';

export const terminalRoutes: readonly SandboxRoute[] = [
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
