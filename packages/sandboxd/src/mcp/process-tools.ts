// MCP process tools (reference sandbox-api.md §1.9): processesList, processExecute, processGet,
// processGetLogs, processStop, processKill.
import { stat } from 'node:fs/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { resolveUserPath, type PathContext } from '../fs/paths.js';
import { badRequest } from '../http/errors.js';
import type { ProcessManager } from '../process/manager.js';
import { portsOpen, withDeadline } from '../process/wait.js';
import { toolResult } from './result.js';

/** The MCP wait cap (upstream's "CloudFront workaround"): after it, the tool asks to poll. */
export const MCP_WAIT_CAP_SEC = 58;

export function registerProcessTools(
  server: McpServer,
  pm: ProcessManager,
  ctx: PathContext,
  procRoot: string,
  waitCapSec = MCP_WAIT_CAP_SEC,
): void {
  const id = { identifier: z.string().describe('Process PID (all digits) or name') };

  server.registerTool('processesList', { description: 'List all processes of the sandbox' }, () =>
    toolResult(() => pm.list().map((p) => p.toResponse(true))),
  );

  server.registerTool(
    'processExecute',
    {
      description: 'Execute a command in the sandbox through the shell',
      inputSchema: {
        command: z.string().min(1),
        name: z.string().optional(),
        workingDir: z.string().optional().describe('Default "/"'),
        env: z.record(z.string(), z.string()).optional(),
        waitForCompletion: z.boolean().optional(),
        timeout: z.number().int().optional().describe('Seconds; default 30 (600 with keepAlive)'),
        waitForPorts: z.array(z.number().int()).optional(),
        restartOnFailure: z.boolean().optional(),
        maxRestarts: z.number().int().optional(),
        keepAlive: z.boolean().optional(),
      },
    },
    (args) =>
      toolResult(async () => {
        const workingDir = resolveUserPath(args.workingDir ?? '/', ctx);
        if (!(await stat(workingDir).catch(() => undefined))?.isDirectory()) {
          throw badRequest(`working directory does not exist: ${workingDir}`);
        }
        const timeout = args.timeout ?? (args.keepAlive ? 600 : 30);
        const p = await pm.start({ ...args, timeout }, workingDir);
        const cap = Math.min(timeout > 0 ? timeout : Infinity, waitCapSec);
        if (args.waitForPorts?.length) {
          if ((await withDeadline(portsOpen(p, args.waitForPorts, procRoot), cap)) === 'timeout') {
            throw new Error(`process timed out after ${cap} seconds waiting for ports`);
          }
        }
        if (args.waitForCompletion && (await withDeadline(p.exited(), cap)) === 'timeout') {
          const r = p.toResponse();
          return {
            pid: r.pid,
            name: r.name,
            status: r.status,
            exitCode: r.exitCode,
            logs: r.logs,
            pollRequired: true,
            message: `Process still running after ${cap} seconds; poll processGet with its pid`,
          };
        }
        return p.toResponse();
      }),
  );

  server.registerTool('processGet', { description: 'Get a process by PID or name', inputSchema: id }, (a) =>
    toolResult(() => pm.get(a.identifier).toResponse()),
  );

  server.registerTool(
    'processGetLogs',
    { description: 'Get the full logs of a process', inputSchema: id },
    (a) =>
      toolResult(() => {
        const p = pm.get(a.identifier);
        return {
          stdout: p.logs.read('stdout'),
          stderr: p.logs.read('stderr'),
          logs: p.logs.read('combined'),
        };
      }),
  );

  server.registerTool('processStop', { description: 'Stop a process (SIGTERM)', inputSchema: id }, (a) =>
    toolResult(() => {
      pm.stop(a.identifier);
      return { message: 'Process stopped successfully' };
    }),
  );

  server.registerTool('processKill', { description: 'Kill a process (SIGKILL)', inputSchema: id }, (a) =>
    toolResult(() => {
      pm.kill(a.identifier);
      return { message: 'Process killed successfully' };
    }),
  );
}
