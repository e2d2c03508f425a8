import { fromSettings } from '@tarmac/sdk/node';
import { runCli, type CliProcess } from './node-context.js';
import { buildProgram } from './program.js';

/** Every command (main.ts; the bundle's dist/cli-full.mjs, scripts/bundle.mjs). */
export function run(proc: CliProcess): void {
  runCli(proc, buildProgram, fromSettings);
}
