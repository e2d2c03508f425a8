#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildProgram } from './program.js';

/**
 * The `tarmac` command. `tarmac up` runs the platform server as a child process (apps never import
 * each other: the CLI only knows where the platform's entry point is installed).
 */
const program = buildProgram({
  version: '0.1.0',
  up: (flags) =>
    new Promise<number>((resolve) => {
      const entry = fileURLToPath(import.meta.resolve('@tarmac/platform/main'));
      const args = [entry];
      for (const [name, value] of Object.entries(flags))
        if (value !== undefined) args.push(`--${name}`, String(value));
      const child = spawn(process.execPath, args, { stdio: 'inherit', env: process.env });
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
        process.on(signal, () => child.kill(signal));
      }
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1)));
    }),
});

program.parseAsync(process.argv).then(
  (code) => process.exit(typeof code === 'number' ? code : 0),
  (err: unknown) => {
    process.stderr.write(`tarmac: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
