import type { Command } from 'commander';
import type { CliContext, GlobalFlags } from '../context.js';
import { explain } from '../errors.js';

/** State shared by the command tree: the exit code the process ends with. */
export interface RunState {
  exitCode: number;
}

/**
 * Wraps a command action: global flags merged in, any failure turned into one explained
 * CliError (labelled `what`), and the returned number used as the exit code.
 */
export function action<A extends unknown[]>(
  state: RunState,
  what: (...args: never[]) => string,
  body: (flags: GlobalFlags & Record<string, unknown>, ...args: A) => Promise<number | void>,
) {
  return async (...raw: unknown[]) => {
    const command = raw.at(-1) as Command;
    const args = raw.slice(0, -2) as A;
    const flags = command.optsWithGlobals<GlobalFlags & Record<string, unknown>>();
    try {
      const code = await body(flags, ...args);
      if (typeof code === 'number') state.exitCode = code;
    } catch (error) {
      throw explain(what(...(args as unknown as never[])), error);
    }
  };
}

export type Register = (program: Command, ctx: CliContext, state: RunState) => void;
