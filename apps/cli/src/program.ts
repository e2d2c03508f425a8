import { Command, CommanderError } from 'commander';
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
import { CliError, EXIT, EXIT_CODES_HELP } from './errors.js';

export type CliActions = CliContext;

/**
 * The command tree. Everything it touches comes in through `ctx`, so tests drive it without
 * processes. `parseAsync` resolves to the exit code; failures reject with a CliError.
 */
export function buildProgram(ctx: CliContext): Command & { run(argv: string[]): Promise<number> } {
  const state: RunState = { exitCode: EXIT.ok };
  const program = new Command('tarmac')
    .description('Tarmac: self-hosted platform for AI workloads')
    .version(ctx.version, '--version', 'print the CLI version')
    .option(
      '-w, --workspace <name>',
      'workspace to act in (default: $TARMAC_WORKSPACE, then credentials.json)',
    )
    .option('--api-url <url>', 'platform URL (default: $TARMAC_API_URL, then credentials.json)')
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`)
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    });

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

  // Every subcommand reports usage errors through the same path, with exit code 2.
  const exitOverride = (command: Command) => {
    command.exitOverride();
    command.configureOutput({ writeOut: (s) => ctx.stdout.write(s), writeErr: (s) => ctx.stderr.write(s) });
    command.commands.forEach(exitOverride);
  };
  exitOverride(program);

  return Object.assign(program, {
    async run(argv: string[]): Promise<number> {
      state.exitCode = EXIT.ok;
      try {
        await program.parseAsync(argv, { from: 'user' });
      } catch (error) {
        if (error instanceof CommanderError) {
          // --help and --version "fail" with exit code 0; real usage errors are already printed.
          return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
        }
        if (error instanceof CliError) throw error;
        throw error;
      }
      return state.exitCode;
    },
  });
}
