// /network routes (reference sandbox-api.md §1.4; spec "Sandbox API" DELETE /network/tunnel).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { portMonitorRequestSchema, tunnelConfigRequestSchema, tunnelConfigSchema } from '@tarmac/contract';
import { jsonBody } from '../http/body.js';
import { HttpError, badRequest, errorMessage, unprocessable } from '../http/errors.js';
import { processPorts } from '../process/ports.js';
import type { PortMonitors } from './monitor.js';
import type { TunnelDriver } from './tunnel.js';

function pidParam(raw: string, procRoot: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) <= 0) throw badRequest(`invalid pid: ${raw}`);
  const pid = Number(raw);
  if (!existsSync(join(procRoot, raw))) throw unprocessable(`process ${pid} not found`);
  return pid;
}

export function networkRoutes(
  app: Hono,
  procRoot: string,
  monitors: PortMonitors,
  tunnel: TunnelDriver,
): void {
  app.get('/network/process/:pid/ports', (c) => {
    const pid = pidParam(c.req.param('pid'), procRoot);
    return c.json({ pid, ports: processPorts(procRoot, pid) });
  });

  app.post('/network/process/:pid/monitor', async (c) => {
    const pid = pidParam(c.req.param('pid'), procRoot);
    const { callback } = await jsonBody(c, portMonitorRequestSchema);
    monitors.start(pid, callback);
    return c.json({ message: 'Port monitoring started' });
  });

  app.delete('/network/process/:pid/monitor', (c) => {
    const raw = c.req.param('pid');
    if (!/^\d+$/.test(raw)) throw badRequest(`invalid pid: ${raw}`);
    monitors.stop(Number(raw));
    return c.json({ message: 'Port monitoring stopped' });
  });

  // Write-only: there is no GET (§1.4). 400 bad body, 422 invalid config, 500 apply failure.
  app.put('/network/tunnel/config', async (c) => {
    const { config } = await jsonBody(c, tunnelConfigRequestSchema);
    let raw: unknown;
    try {
      const text = Buffer.from(config, 'base64').toString('utf8');
      raw = JSON.parse(text);
    } catch {
      throw unprocessable('invalid tunnel config: not base64-encoded JSON');
    }
    const parsed = tunnelConfigSchema.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw unprocessable(`invalid tunnel config: ${i?.path.join('.') ?? ''}: ${i?.message ?? 'invalid'}`);
    }
    try {
      await tunnel.apply(parsed.data);
    } catch (err) {
      throw new HttpError(500, `failed to apply tunnel configuration: ${errorMessage(err)}`);
    }
    return c.json({ message: 'Tunnel configuration updated successfully' });
  });

  app.delete('/network/tunnel', async (c) => {
    if (!tunnel.isUp()) throw badRequest('no tunnel is running');
    try {
      await tunnel.disconnect();
    } catch (err) {
      throw new HttpError(500, `failed to stop tunnel: ${errorMessage(err)}`);
    }
    return c.json({ message: 'Tunnel disconnected' });
  });
}
