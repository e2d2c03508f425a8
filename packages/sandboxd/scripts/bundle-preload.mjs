// Builds the Node preload of src/preload/ (run by bundle.mjs after it has emptied dist/lib; the
// tests run `node scripts/bundle-preload.mjs <dir>` to build it elsewhere):
//   dist/lib/node-proxy.cjs        the preload itself, ~2 KB: what NODE_OPTIONS=--require loads
//                                  in every node process of a sandbox
//   dist/lib/node-proxy-agent.cjs  undici's EnvHttpProxyAgent, loaded on a process's first fetch
// The engine copies lib/*.cjs to /.tarmac/lib/. CommonJS because --require is understood by any
// node an image may have (--import needs 18.19/20.6); the small entry is built for old syntax
// since it runs in the image's node, whatever version that is.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2] ?? join(pkg, 'dist/lib');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  legalComments: 'none',
  minify: true,
  logLevel: 'warning',
};

await Promise.all([
  build({
    ...common,
    target: 'node12',
    entryPoints: [join(pkg, 'src/preload/main.ts')],
    outfile: join(out, 'node-proxy.cjs'),
  }),
  build({
    ...common,
    target: 'node18',
    entryPoints: [join(pkg, 'src/preload/node-proxy-agent.ts')],
    outfile: join(out, 'node-proxy-agent.cjs'),
  }),
]);
