// Builds the sandboxd the engine injects at /.tarmac/sandboxd.mjs, with every npm dependency
// inlined (there is no node_modules in a sandbox):
//   dist/sandboxd.bundle.mjs  the daemon (~200 KB; zod/mini only, so a start compiles little)
//   dist/lib/mcp.mjs          the MCP server (SDK, classic zod, tools), imported on the first /mcp
//   dist/lib/pty.node         node-pty's prebuilt addon
//   dist/lib/node-proxy*.cjs  the preload that sends Node's fetch through the egress proxy
//                             (scripts/bundle-preload.mjs)
//   dist/lib/sandboxd.cjs     the same daemon as CommonJS, and dist/lib/sandboxd-boot.cjs, the
//                             loader that runs it with V8's code cache (scripts/sandboxd-boot.cjs;
//                             the engine prefers it: ARCHITECTURE.md "Start-up")
// The engine copies lib/ next to the bundle to /.tarmac/lib/, where the bundle loads both from.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(pkg, 'package.json'));

// node-pty resolves its binary with require('@lydell/node-pty-<platform>-<arch>/pty.node').
const ptyBinary = {
  name: 'pty-binary-next-to-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\/requireBinary$/ }, (args) =>
      args.importer.includes(`${join('@lydell', 'node-pty')}`)
        ? { path: 'requireBinary', namespace: 'pty-binary' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'pty-binary' }, () => ({
      loader: 'js',
      contents: `
        import { createRequire } from 'node:module';
        import { basename, dirname, join } from 'node:path';
        import { fileURLToPath } from 'node:url';
        export function requireBinary(file) {
          // This code is in the entry file or in a file under lib/: find lib/ from either.
          const here = dirname(fileURLToPath(import.meta.url));
          const lib = basename(here) === 'lib' ? here : join(here, 'lib');
          return createRequire(import.meta.url)(join(lib, file));
        }`,
    }));
  },
};

// The daemon imports './server.js' from src/mcp/routes.ts lazily: point it at lib/mcp.mjs.
const mcpAsSeparateFile = {
  name: 'mcp-as-separate-file',
  setup(b) {
    b.onResolve({ filter: /^\.\/server\.js$/ }, (args) =>
      args.importer.endsWith(join('src', 'mcp', 'routes.ts'))
        ? { path: './lib/mcp.mjs', external: true }
        : undefined,
    );
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['source'],
  mainFields: ['module', 'main'],
  legalComments: 'none',
  minify: true, // roughly halves V8's compile time of the bundle at every sandbox start
  logLevel: 'warning',
  // sandboxd uses only the sandbox-api schemas of the contract: leave the management plane's out.
  alias: { '@tarmac/contract': join(pkg, '../contract/src/sandbox-api/index.ts') },
  // CommonJS dependencies call require() for node builtins; give the ESM output one.
  banner: {
    js: "import { createRequire as __tarmacCreateRequire } from 'node:module'; const require = __tarmacCreateRequire(import.meta.url);",
  },
};

rmSync(join(pkg, 'dist/lib'), { recursive: true, force: true });
await Promise.all([
  build({
    ...common,
    entryPoints: [join(pkg, 'src/main.ts')],
    outfile: join(pkg, 'dist/sandboxd.bundle.mjs'),
    plugins: [ptyBinary, mcpAsSeparateFile],
  }),
  build({
    ...common,
    entryPoints: [join(pkg, 'src/mcp/server.ts')],
    outfile: join(pkg, 'dist/lib/mcp.mjs'),
  }),
  // CommonJS twin of the daemon for sandboxd-boot.cjs (vm.Script takes a code cache; ES modules
  // do not in node 20). import.meta.url (the pty addon's loader) is the file's own URL, and the
  // one dynamic import goes through the loader's __tarmacImport.
  build({
    ...common,
    format: 'cjs',
    entryPoints: [join(pkg, 'src/main.ts')],
    outfile: join(pkg, 'dist/lib/sandboxd.cjs'),
    plugins: [ptyBinary, mcpAsSeparateFile],
    define: { 'import.meta.url': '__tarmacUrl' },
    banner: { js: "var __tarmacUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
]);

{
  const cjs = join(pkg, 'dist/lib/sandboxd.cjs');
  const text = readFileSync(cjs, 'utf8');
  const parts = text.split('import("./lib/mcp.mjs")');
  if (parts.length !== 2) throw new Error(`expected one import of ./lib/mcp.mjs in ${cjs}`);
  writeFileSync(cjs, parts.join('__tarmacImport("./lib/mcp.mjs")'));
  copyFileSync(join(pkg, 'scripts/sandboxd-boot.cjs'), join(pkg, 'dist/lib/sandboxd-boot.cjs'));
}

mkdirSync(join(pkg, 'dist/lib'), { recursive: true });
copyFileSync(
  require.resolve(`@lydell/node-pty-${process.platform}-${process.arch}/pty.node`),
  join(pkg, 'dist/lib/pty.node'),
);

await import('./bundle-preload.mjs');
