import { Command } from 'commander';

export interface CliActions {
  version: string;
  up(flags: { port?: string; host?: string; home?: string }): Promise<number>;
}

/** The command tree; actions are injected so the tree is testable without processes. */
export function buildProgram(
  actions: CliActions,
): Command & { parseAsync(argv: string[]): Promise<unknown> } {
  const program = new Command('tarmac')
    .description('Tarmac: self-hosted platform for AI workloads')
    .version(actions.version);
  let exitCode = 0;
  program
    .command('up')
    .description('Start the platform (creates the database, account, workspace and admin key on first start)')
    .option('--port <port>', 'listen port (default 8080)')
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--home <dir>', 'data directory (default $TARMAC_HOME or ~/.tarmac)')
    .action(async (flags: { port?: string; host?: string; home?: string }) => {
      exitCode = await actions.up(flags);
    });
  program
    .command('version')
    .description('Print the CLI version')
    .action(() => {
      process.stdout.write(`${actions.version}\n`);
    });
  const parseAsync = program.parseAsync.bind(program);
  return Object.assign(program, {
    parseAsync: async (argv: string[]) => {
      await parseAsync(argv);
      return exitCode;
    },
  });
}
