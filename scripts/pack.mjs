// Packs @tarmac/sdk and @tarmac/cli as tarballs a project outside this checkout can
// `npm install` (issue 14 item 9). In the workspace both depend on private workspace packages
// (@tarmac/contract, @tarmac/platform, engine, store...) that are on no registry, so each is
// staged under dist-pack/<name>/ with those inlined by esbuild, then `npm pack`ed there:
//   dist-pack/tarmac-sdk-<version>.tgz  the SDK; depends only on ws and zod (from the registry).
//                                        Types: the SDK's .d.ts with the contract's beside them.
//   dist-pack/tarmac-cli-<version>.tgz  the `tarmac` command and the platform it starts; no
//                                        dependencies at all: every JS dependency is bundled, and
//                                        the two native addons travel as files (better-sqlite3's
//                                        and sandboxd's node-pty), built for this Node's ABI.
// Run after `npm run build` (the root `npm run pack` does both). Prints the two tarball paths.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist-pack');
const require = createRequire(join(root, 'package.json'));
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['source'],
  legalComments: 'none',
  logLevel: 'warning',
  // CommonJS dependencies call require() for node builtins; give the ESM output one.
  banner: {
    js: "import { createRequire as __tarmacCreateRequire } from 'node:module'; const require = __tarmacCreateRequire(import.meta.url);",
  },
};

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function npmPack(dir) {
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: dir });
  const [{ filename }] = JSON.parse(output.toString('utf8'));
  return join(out, filename);
}

async function packSdk() {
  const source = join(root, 'packages/sdk');
  const pkg = readJson(join(source, 'package.json'));
  const stage = join(out, 'sdk');
  // Splitting: `@tarmac/sdk/node` patches the default client of the same Sandbox class the main
  // entry exports, so both entries must share one copy of it (a chunk), not each their own.
  await build({
    ...common,
    banner: undefined,
    entryPoints: { index: join(source, 'src/index.ts'), 'node/main': join(source, 'src/node/main.ts') },
    outdir: join(stage, 'dist'),
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: Object.keys(pkg.dependencies).filter((name) => !name.startsWith('@tarmac/')),
  });
  // Declarations: tsc's, with the contract's copied under dist/contract/ and imported from there.
  const contractDist = join(root, 'packages/contract/dist');
  for (const file of walk(contractDist).filter((f) => f.endsWith('.d.ts')))
    cpSync(file, join(stage, 'dist/contract', relative(contractDist, file)));
  const sdkDist = join(source, 'dist');
  for (const file of walk(sdkDist).filter((f) => f.endsWith('.d.ts'))) {
    const target = join(stage, 'dist', relative(sdkDist, file));
    let contractIndex = relative(dirname(target), join(stage, 'dist/contract/index.js'));
    if (!contractIndex.startsWith('.')) contractIndex = `./${contractIndex}`;
    const text = readFileSync(file, 'utf8').replace(/(['"])@tarmac\/contract\1/g, `'${contractIndex}'`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text.replace(/\/\/# sourceMappingURL=.*\n?/g, ''));
  }
  const contractDeps = readJson(join(root, 'packages/contract/package.json')).dependencies;
  const dependencies = { ...contractDeps, ...pkg.dependencies };
  delete dependencies['@tarmac/contract'];
  writeFileSync(
    join(stage, 'package.json'),
    JSON.stringify(
      {
        name: pkg.name,
        version: pkg.version,
        description: 'TypeScript client of Tarmac: management API and sandboxes.',
        type: 'module',
        exports: {
          '.': { types: './dist/index.d.ts', default: './dist/index.js' },
          './node': { types: './dist/node/main.d.ts', default: './dist/node/main.js' },
        },
        files: ['dist', 'README.md'],
        dependencies,
        engines: { node: '>=20.19' },
      },
      null,
      2,
    ),
  );
  cpSync(join(source, 'README.md'), join(stage, 'README.md'));
  return npmPack(stage);
}

// better-sqlite3 finds its addon with require('bindings')('better_sqlite3.node'), which searches
// node_modules; in the bundle the addon is a file beside platform.mjs.
const sqliteAddonBesideBundle = {
  name: 'sqlite-addon-beside-bundle',
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'addon-beside-bundle' }));
    b.onLoad({ filter: /.*/, namespace: 'addon-beside-bundle' }, () => ({
      loader: 'js',
      // CommonJS, as better-sqlite3 calls it; `require` is the bundle's own (its banner), called
      // indirectly so that esbuild leaves it for run time instead of globbing './*'.
      contents: "const load = require; module.exports = (file) => load('./' + file);",
    }));
  },
};

async function packCli() {
  const source = join(root, 'apps/cli');
  const pkg = readJson(join(source, 'package.json'));
  const stage = join(out, 'cli');
  const dist = join(stage, 'dist');
  // pg-native and ws's bufferutil/utf-8-validate are optional: required inside try/catch.
  const external = ['pg-native', 'bufferutil', 'utf-8-validate'];
  await build({
    ...common,
    entryPoints: [join(source, 'src/main.ts')],
    outfile: join(dist, 'main.js'),
    external,
  });
  // The platform as the sibling file apps/cli/src/main.ts's `up` looks for first.
  await build({
    ...common,
    entryPoints: [join(root, 'apps/platform/src/main.ts')],
    outfile: join(dist, 'platform.mjs'),
    external,
    plugins: [sqliteAddonBesideBundle],
  });
  // better-sqlite3 once more, alone, for the store's checkpoint worker thread (packages/store
  // wal-checkpointer.ts): a worker cannot reach the copy inlined in platform.mjs.
  await build({
    ...common,
    format: 'cjs',
    banner: {},
    entryPoints: [require.resolve('better-sqlite3')],
    outfile: join(dist, 'better-sqlite3.cjs'),
    plugins: [sqliteAddonBesideBundle],
  });
  const sqlite = dirname(require.resolve('better-sqlite3/package.json'));
  cpSync(join(sqlite, 'build/Release/better_sqlite3.node'), join(dist, 'better_sqlite3.node'));
  // sandboxd as built by packages/sandboxd (bundle plus lib/), where platform main looks first.
  const sandboxd = join(root, 'packages/sandboxd/dist');
  cpSync(join(sandboxd, 'sandboxd.bundle.mjs'), join(dist, 'sandboxd/sandboxd.bundle.mjs'));
  cpSync(join(sandboxd, 'lib'), join(dist, 'sandboxd/lib'), { recursive: true });
  writeFileSync(
    join(stage, 'package.json'),
    JSON.stringify(
      {
        name: pkg.name,
        version: pkg.version,
        description: 'The tarmac command, with the Tarmac platform it starts (tarmac up).',
        type: 'module',
        bin: { tarmac: './dist/main.js' },
        files: ['dist'],
        engines: { node: `>=20.19 <${Number(process.versions.node.split('.')[0]) + 1}` },
      },
      null,
      2,
    ),
  );
  return npmPack(stage);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tarballs = [await packSdk(), await packCli()];
process.stdout.write(`${tarballs.join('\n')}\n`);
