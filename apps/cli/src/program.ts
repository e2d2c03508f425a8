import { registerAuth } from './commands/auth.js';
import { registerCompletion } from './commands/completion.js';
import { registerDeploy } from './commands/deploy.js';
import { registerPreview } from './commands/preview.js';
import { registerResources } from './commands/resources.js';
import type { RunState } from './commands/run.js';
import { registerSandbox } from './commands/sandbox.js';
import { registerJobs } from './commands/jobs.js';
import { registerWorkloadLogs } from './commands/workload-logs.js';
import type { CliContext } from './context.js';
import { EXIT } from './errors.js';
import { rootCommand, runnable, type CliProgram } from './program-base.js';

export type CliActions = CliContext;

/**
 * The command tree. Everything it touches comes in through `ctx`, so tests drive it without
 * processes. `parseAsync` resolves to the exit code; failures reject with a CliError.
 */
export function buildProgram(ctx: CliContext): CliProgram {
  const state: RunState = { exitCode: EXIT.ok };
  const program = rootCommand(ctx);

  program
    .command('up')
    .description('Start the platform (creates the database, account, workspace and admin key on first start)')
    .option('--port <port>', 'listen port (default 8080)')
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--home <dir>', 'data directory (default $TARMAC_HOME or ~/.tarmac)')
    .action(async (flags: { port?: string; host?: string; home?: string }) => {
      state.exitCode = await ctx.up(flags);
    });
  program
    .command('version')
    .description('Print the CLI version, and the platform version when one is configured')
    .action(async () => {
      ctx.stdout.write(`tarmac ${ctx.version}\n`);
      // Best effort: a missing configuration or a stopped platform is not an error here.
      try {
        const client = await ctx.client(program.opts());
        const doc = await client.call<{ info?: { version?: string } }>('GET', '/v0/openapi.json', {
          signal: AbortSignal.timeout(3000),
        });
        ctx.stdout.write(`platform ${doc.info?.version ?? 'unknown'} at ${client.apiUrl}\n`);
      } catch {
        // nothing to add
      }
    });

  for (const register of [
    registerAuth,
    registerResources,
    registerSandbox,
    registerPreview,
    registerDeploy,
    registerCompletion,
    registerJobs,
    registerWorkloadLogs,
  ]) {
    register(program, ctx, state);
  }

  return runnable(program, ctx, state);
}
