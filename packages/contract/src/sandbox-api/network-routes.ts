// The sandbox API's network routes (routes.ts): a process's ports, port monitors, the egress tunnel.
import { sandboxSuccessSchema } from './common.js';
import {
  portMonitorRequestSchema,
  processPortsResponseSchema,
  tunnelConfigRequestSchema,
} from './network.js';
import type { SandboxRoute } from './route-spec.js';

export const networkRoutes: readonly SandboxRoute[] = [
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
];
