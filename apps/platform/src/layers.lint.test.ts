// The layer rules of eslint.config.js fail on a deliberate violation (issue 13 "What it must
// show"): the same config `npm run lint` uses, applied to fixture sources at paths inside the
// layers. Type-aware rules are switched off for these in-memory files only (they are in no
// tsconfig); the layer rules are syntactic.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/switch-exhaustiveness-check': 'off' },
  },
});

async function lint(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint: layers of apps/platform', () => {
  it('refuses a plane importing another plane', async () => {
    const messages = await lint(
      'apps/platform/src/planes/identity/users/fixture.ts',
      "export { SandboxesService } from '../../sandbox/records/sandboxes.service.js';\n",
    );
    expect(messages).toEqual([
      expect.stringMatching(/^tarmac\/platform-layers: planes\/identity may not import planes\/sandbox/),
    ]);
  });

  it('refuses a type-only import across planes too, however the path is spelled', async () => {
    const messages = await lint(
      'apps/platform/src/planes/metering/fixture.ts',
      "import type { JwtService } from '../metering/../identity/auth/jwt.js';\nexport type T = JwtService;\n",
    );
    expect(messages).toEqual([expect.stringMatching(/planes\/metering may not import planes\/identity/)]);
  });

  it('refuses the framework importing a plane, and a plane importing the composition root', async () => {
    expect(
      await lint(
        'apps/platform/src/framework/fixture.ts',
        "export * from '../planes/catalogue/catalogue.js';\n",
      ),
    ).toEqual([expect.stringMatching(/framework\/ sits below every plane/)]);
    expect(
      await lint(
        'apps/platform/src/planes/ops/fixture.ts',
        "export { resolveConfig } from '../../config.js';\n",
      ),
    ).toEqual([expect.stringMatching(/may not import the composition root/)]);
  });

  it('accepts a plane importing the framework and itself, and the root importing planes', async () => {
    expect(
      await lint(
        'apps/platform/src/planes/sandbox/volumes/fixture.ts',
        "export { SecretBox } from '../../../framework/secrets.js';\nexport { SANDBOX_KIND } from '../records/sandbox-record.js';\n",
      ),
    ).toEqual([]);
    expect(
      await lint('apps/platform/src/fixture.ts', "export * from './planes/identity/bootstrap.js';\n"),
    ).toEqual([]);
  });
});

describe('lint: package layers', () => {
  it('refuses an engine file importing a workspace package', async () => {
    const messages = await lint(
      'packages/engine/src/fixture.ts',
      "import type { Store } from '@tarmac/store';\nexport type S = Store;\n",
    );
    expect(messages).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*engine imports no workspace package/),
    ]);
    expect(await lint('packages/engine/src/fixture.ts', "export * from '@tarmac/contract';\n")).toEqual([
      expect.stringMatching(/engine imports no workspace package/),
    ]);
  });

  it('lets sandboxd import the contract and nothing else', async () => {
    expect(await lint('packages/sandboxd/src/fixture.ts', "export * from '@tarmac/contract';\n")).toEqual([]);
    expect(await lint('packages/sandboxd/src/fixture.ts', "export * from '@tarmac/engine';\n")).toEqual([
      expect.stringMatching(/sandboxd depends on contract only/),
    ]);
  });
});
