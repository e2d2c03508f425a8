// Lint rules, including the layering of ../shared/design/ARCHITECTURE.md ("Packages and dependency
// direction"): arrows point down only, and only main.ts touches the process environment.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const node = { group: ['node:*'], message: 'This package is browser-safe: no node: imports.' };
const ban = (names, why) => names.map((name) => ({ group: [name, `${name}/*`], message: why }));
const apps = ['@tarmac/platform', '@tarmac/cli', '@tarmac/console'];

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

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.tsbuildinfo'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...layers.map(({ files, ignores, patterns }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  })),
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
