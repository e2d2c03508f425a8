import { buildDeployProgram } from './deploy-program.js';
import { runCli, type CliProcess } from './node-context.js';

/**
 * `deploy` and `push` alone (main.ts; the bundle's dist/cli-deploy.mjs, scripts/bundle.mjs).
 * They use `ctx.coreClient` only: the full SDK (`ctx.client`) is left out of this bundle.
 */
export function run(proc: CliProcess): void {
  runCli(proc, buildDeployProgram, () =>
    Promise.reject(new Error('internal: deploy and push have no full SDK client (cli-deploy.ts)')),
  );
}
