// Builds dist/tarmac.mjs: the `tarmac` command as one minified file with every dependency
// inlined (the workspace packages and npm ones), what `bin` and the e2e tests run. Node then
// resolves and compiles one module instead of ~200 (issue 15 bench: `tarmac deploy` spent
// ~0.5 s loading its modules before its first request, as long as half a warm rebuild).
// The platform is not inlined: `tarmac up` only resolves its entry point (src/main.ts).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [join(pkg, 'src/main.ts')],
  outfile: join(pkg, 'dist/tarmac.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['source'],
  minify: true, // roughly halves V8's compile time of the bundle at every start
  legalComments: 'none',
  logLevel: 'warning',
  external: ['@tarmac/platform', '@tarmac/platform/*'],
  // CommonJS dependencies call require() for node builtins; give the ESM output one.
  banner: {
    js: "import { createRequire as __tarmacCreateRequire } from 'node:module'; const require = __tarmacCreateRequire(import.meta.url);",
  },
});
