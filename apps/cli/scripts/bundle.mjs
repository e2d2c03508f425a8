// Builds the `tarmac` command, minified, with every dependency inlined (the workspace packages
// and npm ones): what `bin` and the e2e tests run. Node then resolves and compiles a few files
// instead of ~200 (issue 15 bench: `tarmac deploy` spent ~0.5 s loading its modules before its
// first request, as long as half a warm rebuild).
//   dist/tarmac.mjs      src/main.ts: looks at the first argument and imports one of
//   dist/cli-deploy.mjs  src/cli-deploy.ts: `deploy` and `push` only, or
//   dist/cli-full.mjs    src/cli-full.ts: every command.
// The two are whole bundles (never both loaded, so no module is there twice in a process): a
// deploy compiles and runs neither the other commands nor zod and the contract's schemas (issue 15
// bench: 0.07 s of the CLI's 0.14 s start). For that the contract's and the SDK's modules are
// declared free of side effects here (a module none of whose exports is used is left out), all
// but `@tarmac/sdk/node`'s entry, which registers the default client. (One build with esbuild's
// `splitting` does not do it: its chunks put zod with the modules every command shares.)
// The platform is not inlined: `tarmac up` only resolves its entry point (src/main.ts).

import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = join(pkg, '../../packages');
const pure = [join(packages, 'contract/src') + sep, join(packages, 'sdk/src') + sep];
const impure = new Set([join(packages, 'sdk/src/node/main.ts')]);
const MARK = 'pure-workspace-modules';

/** Marks the contract's and the SDK's source modules as side-effect free (see above). */
const pureWorkspaceModules = {
  name: MARK,
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === MARK) return undefined;
      const workspaceImport =
        args.path.startsWith('@tarmac/') ||
        (args.path.startsWith('.') && pure.some((dir) => args.importer.startsWith(dir)));
      if (!workspaceImport) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: MARK,
      });
      if (resolved.errors.length > 0 || resolved.external) return resolved;
      const isPure = pure.some((dir) => resolved.path.startsWith(dir)) && !impure.has(resolved.path);
      return isPure ? { ...resolved, sideEffects: false } : resolved;
    });
  },
};

/** main.ts's `import('./cli-….js')`: the bundles built beside it. */
const cliBundles = {
  name: 'cli-bundles',
  setup(b) {
    b.onResolve({ filter: /^\.\/cli-(deploy|full)\.js$/ }, (args) => ({
      path: args.path.replace(/\.js$/, '.mjs'),
      external: true,
    }));
  },
};

const common = {
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
};

await Promise.all([
  build({
    ...common,
    entryPoints: [join(pkg, 'src/main.ts')],
    outfile: join(pkg, 'dist/tarmac.mjs'),
    plugins: [cliBundles],
  }),
  ...['cli-deploy', 'cli-full'].map((name) =>
    build({
      ...common,
      entryPoints: [join(pkg, `src/${name}.ts`)],
      outfile: join(pkg, `dist/${name}.mjs`),
      plugins: [pureWorkspaceModules],
    }),
  ),
]);
