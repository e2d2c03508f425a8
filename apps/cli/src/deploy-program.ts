import { registerDeploy } from './commands/deploy.js';
import type { RunState } from './commands/run.js';
import type { CliContext } from './context.js';
import { EXIT } from './errors.js';
import { rootCommand, runnable, type CliProgram } from './program-base.js';

/**
 * The command tree of `tarmac deploy` and `tarmac push` alone (main.ts picks it, through
 * cli-deploy.ts, when one of them is the first argument): the same root, global flags and deploy/push commands as
 * program.ts, without the other commands and the SDK's resource wrappers, so the bundle's deploy
 * path loads no contract schema and not zod (issue 15 bench: warm rebuild through the CLI).
 */
export function buildDeployProgram(ctx: CliContext): CliProgram {
  const state: RunState = { exitCode: EXIT.ok };
  const program = rootCommand(ctx);
  registerDeploy(program, ctx, state);
  return runnable(program, ctx, state);
}
