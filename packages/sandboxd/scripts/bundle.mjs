// Builds the sandboxd the engine injects at /.tarmac/sandboxd.mjs: every npm dependency inlined
// (there is no node_modules in a sandbox) into dist/sandboxd.bundle.mjs plus lazily loaded chunks
// in dist/lib/, and node-pty's native addon copied to dist/lib/pty.node. The engine copies lib/
// next to the bundle to /.tarmac/lib/, where the bundle loads chunks and addon from.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
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
          // This code lands in the entry file or in a chunk under lib/: find lib/ from either.
          const here = dirname(fileURLToPath(import.meta.url));
          const lib = basename(here) === 'lib' ? here : join(here, 'lib');
          return createRequire(import.meta.url)(join(lib, file));
        }`,
    }));
  },
};

rmSync(join(pkg, 'dist/lib'), { recursive: true, force: true });
rmSync(join(pkg, 'dist/sandboxd.bundle.mjs'), { force: true });

await build({
  // One entry file plus lazily imported chunks in lib/ (MCP, terminal, multipart): the daemon
  // compiles only what it needs to start.
  entryPoints: { 'sandboxd.bundle': join(pkg, 'src/main.ts') },
  outdir: join(pkg, 'dist'),
  splitting: true,
  chunkNames: 'lib/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['source'],
  mainFields: ['module', 'main'],
  legalComments: 'none',
  minify: true, // halves V8's compile time of the bundle at every sandbox start
  keepNames: false,
  logLevel: 'warning',
  plugins: [ptyBinary],
  // sandboxd uses only the sandbox-api schemas of the contract: leave the management plane's out.
  alias: { '@tarmac/contract': join(pkg, '../contract/src/sandbox-api/index.ts') },
  // CommonJS dependencies call require() for node builtins; give the ESM bundle one.
  banner: {
    js: "import { createRequire as __tarmacCreateRequire } from 'node:module'; const require = __tarmacCreateRequire(import.meta.url);",
  },
});

mkdirSync(join(pkg, 'dist/lib'), { recursive: true });
copyFileSync(
  require.resolve(`@lydell/node-pty-${process.platform}-${process.arch}/pty.node`),
  join(pkg, 'dist/lib/pty.node'),
);
