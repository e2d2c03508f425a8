// Lint rules, including the layering of ../shared/design/ARCHITECTURE.md ("Packages and dependency
// direction"): arrows point down only, and only main.ts touches the process environment. Inside
// apps/platform, the planes of apps/platform/ARCHITECTURE.md (rule `tarmac/platform-layers`).
// eslint.test.ts beside this file proves the layer rules fail on a deliberate violation.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { dirname, relative, resolve } from 'node:path';

const node = { group: ['node:*'], message: 'This package is browser-safe: no node: imports.' };
const ban = (names, why) => names.map((name) => ({ group: [name, `${name}/*`], message: why }));
const apps = ['@tarmac/platform', '@tarmac/cli', '@tarmac/console'];
const workspacePackages = [
  '@tarmac/contract',
  '@tarmac/sdk',
  '@tarmac/store',
  '@tarmac/server-kit',
  '@tarmac/engine',
  '@tarmac/sandboxd',
  ...apps,
];

/** One entry per layer: which files, and which imports they may not make. */
const layers = [
  {
    files: ['packages/contract/src/**'],
    patterns: [
      node,
      ...ban(
        ['@tarmac/sdk', '@tarmac/store', '@tarmac/server-kit', '@tarmac/engine', ...apps],
        'contract is the bottom layer.',
      ),
    ],
  },
  {
    // The browser-safe entry: no node: imports, no `ws`, nothing from the Node entry (src/node/).
    files: ['packages/sdk/src/**'],
    ignores: ['packages/sdk/src/node/**'],
    patterns: [
      node,
      {
        group: ['ws', '**/node/*', '**/node/**'],
        message: 'Node-only: keep it under packages/sdk/src/node/.',
      },
      ...ban(
        ['@tarmac/store', '@tarmac/server-kit', '@tarmac/engine', ...apps],
        'sdk depends on contract only.',
      ),
    ],
  },
  {
    // @tarmac/sdk/node: credentials.json, *.localhost resolution, `ws`; may use node: modules.
    files: ['packages/sdk/src/node/**'],
    patterns: ban(
      ['@tarmac/store', '@tarmac/server-kit', '@tarmac/engine', ...apps],
      'sdk depends on contract only.',
    ),
  },
  {
    files: ['packages/server-kit/src/**'],
    patterns: ban(
      ['@tarmac/sdk', '@tarmac/store', '@tarmac/engine', ...apps],
      'server-kit depends on contract only.',
    ),
  },
  {
    files: ['packages/store/src/**'],
    patterns: ban(
      ['@tarmac/sdk', '@tarmac/server-kit', '@tarmac/engine', ...apps],
      'store is a leaf library.',
    ),
  },
  {
    // The engine drives runc, images and the network for any caller: it knows no other package.
    files: ['packages/engine/src/**'],
    patterns: ban(workspacePackages, 'engine imports no workspace package.'),
  },
  {
    // sandboxd runs inside every sandbox; it speaks only the contract's wire shapes.
    files: ['packages/sandboxd/src/**'],
    patterns: ban(
      workspacePackages.filter((name) => name !== '@tarmac/contract'),
      'sandboxd depends on contract only.',
    ),
  },
  {
    files: ['apps/platform/src/**'],
    patterns: ban(['@tarmac/cli', '@tarmac/console'], 'apps never import each other.'),
  },
  {
    files: ['apps/cli/src/**', 'apps/console/src/**'],
    patterns: ban(
      ['@tarmac/store', '@tarmac/server-kit', '@tarmac/engine', ...apps],
      'cli and console go through sdk.',
    ),
  },
];

/**
 * The layers inside apps/platform/src (apps/platform/ARCHITECTURE.md): framework/ sits below every
 * plane, planes/<plane>/ import the framework and their own plane only, and the composition root
 * (the files at the top of src/, and home/) may import anything. A relative import is resolved
 * against the importing file, so `../` chains cannot hide a crossing.
 */
const PLATFORM_SRC = resolve(import.meta.dirname, 'apps/platform/src');
const platformLayer = (file) => {
  const rel = relative(PLATFORM_SRC, file).split('\\').join('/');
  if (rel.startsWith('..')) return undefined;
  const [top, plane] = rel.split('/');
  if (top === 'framework') return { rank: 0, name: 'framework' };
  if (top === 'planes' && plane && rel.split('/').length > 2) return { rank: 1, name: `planes/${plane}` };
  return { rank: 2, name: 'the composition root' };
};
const platformLayers = {
  meta: {
    type: 'problem',
    docs: {
      description: 'Planes import the framework and never each other (apps/platform/ARCHITECTURE.md).',
    },
    schema: [],
  },
  create(context) {
    const from = platformLayer(context.filename);
    if (!from) return {};
    const check = (node) => {
      const spec = node.source && node.source.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const to = platformLayer(resolve(dirname(context.filename), spec));
      if (!to || to.name === from.name) return;
      if (from.rank === 0 && to.rank > 0) {
        context.report({ node, message: `framework/ sits below every plane; it may not import ${to.name}.` });
      } else if (from.rank === 1 && to.rank === 1) {
        context.report({
          node,
          message: `${from.name} may not import ${to.name}: planes meet only in the composition root (compose.ts), through interfaces it hands in.`,
        });
      } else if (from.rank === 1 && to.rank === 2) {
        context.report({
          node,
          message: `${from.name} may not import the composition root; take what you need as an argument.`,
        });
      }
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', 'dist-pack/**', '**/node_modules/**', '**/*.tsbuildinfo'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Example projects run as plain Node programs inside their own images: Node's globals.
    files: ['examples/**/*.{js,mjs}'],
    languageOptions: {
      globals: Object.fromEntries(
        ['fetch', 'AbortSignal', 'Buffer', 'URLSearchParams', 'setTimeout', 'clearTimeout'].map((g) => [
          g,
          'readonly',
        ]),
      ),
    },
  },
  ...layers.map(({ files, ignores, patterns }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  })),
  {
    files: ['apps/platform/src/**/*.ts'],
    // Tests and their support may reach across (a harness builds the whole platform).
    ignores: ['**/*.test.ts', '**/test-support/**', '**/test-support.ts'],
    plugins: { tarmac: { rules: { 'platform-layers': platformLayers } } },
    rules: { 'tarmac/platform-layers': 'error' },
  },
  {
    // A switch over a union (a status, a kind, an error code) without a default names every member:
    // a new member is then a lint error where it is not handled, not a silent fall-through. A
    // written default counts as handling the rest (the sandbox controller's FAILED-and-others).
    files: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-support/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },
  {
    // Only main.ts reads the environment (engineering conventions).
    files: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['**/main.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Only main.ts reads the environment; pass config in.',
        },
      ],
    },
  },
);
