// GET /health (reference sandbox-api.md §1.8), plus the standby signal: `keepAlive` is the number
// of running keep-alive processes (§1.3 "keepAlive", §4). The platform polls this cheap route and
// keeps the sandbox out of STANDBY while it is > 0 (ARCHITECTURE.md "Keep-alive signal").
import type { Hono } from 'hono';
import type { SandboxHealth } from '@tarmac/contract';
import type { Clock } from './config.js';
import type { ProcessManager } from './process/manager.js';

export function healthRoutes(app: Hono, pm: ProcessManager, clock: Clock, version: string): void {
  const startedAt = clock.now();
  app.get('/health', (c) => {
    const seconds = Math.max(0, Math.floor((clock.now().getTime() - startedAt.getTime()) / 1000));
    const body: SandboxHealth = {
      status: 'ok',
      version,
      nodeVersion: process.version,
      os: process.platform,
      arch: process.arch,
      startedAt: startedAt.toISOString(),
      uptime: `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m${seconds % 60}s`,
      uptimeSeconds: seconds,
      keepAlive: pm.keepAliveCount(),
      processes: pm.list().filter((p) => p.running).length,
    };
    return c.json(body);
  });
}
