#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The `tarmac` process (dist/tarmac.mjs; the packed CLI's dist/main.js): node-context.ts.
 * `deploy` and `push` as the first argument run their own command tree (deploy-program.ts), which
 * the bundle keeps in a file of its own (scripts/bundle.mjs): a deploy compiles and runs neither
 * the other commands nor zod and the contract's schemas (issue 15 bench: the CLI's start was a
 * quarter of a warm rebuild). Global flags before the command take the full tree.
 *
 * The platform's entry point: beside this file when installed from the packed tarball
 * (scripts/pack.mjs bundles it as platform.mjs), else the workspace package.
 */
function platformEntry(): string {
  const bundled = fileURLToPath(new URL('./platform.mjs', import.meta.url));
  return existsSync(bundled) ? bundled : fileURLToPath(import.meta.resolve('@tarmac/platform/main'));
}

const argv = process.argv.slice(2);
const cli = argv[0] === 'deploy' || argv[0] === 'push' ? import('./cli-deploy.js') : import('./cli-full.js');
void cli.then((m) => m.run({ argv, env: process.env, platformEntry }));
