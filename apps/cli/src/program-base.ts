import { Command, CommanderError } from 'commander';
import type { RunState } from './commands/run.js';
import type { CliContext } from './context.js';
import { CliError, EXIT, EXIT_CODES_HELP } from './errors.js';

export type CliProgram = Command & { run(argv: string[]): Promise<number> };

/** The root command: name, version, the global flags and where output goes. */
export function rootCommand(ctx: CliContext): Command {
  return new Command('tarmac')
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
}

/**
 * Makes the registered tree runnable: every subcommand reports usage errors through the same
 * path, with exit code 2; `run` resolves to the exit code, failures reject with a CliError.
 */
export function runnable(program: Command, ctx: CliContext, state: RunState): CliProgram {
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
