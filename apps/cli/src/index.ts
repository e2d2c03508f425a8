export { buildProgram, type CliActions } from './program.js';
export type { CliContext, CliIo, GlobalFlags } from './context.js';
export { CliError, EXIT, formatError, explain } from './errors.js';
