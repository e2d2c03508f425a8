// The main entry must run in browsers: bundling it for the browser platform must not pull in any
// Node built-in or the `ws` package (those belong to @tarmac/sdk/node). The lint rule checks
// direct imports; this checks everything reachable, dependencies included.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('browser bundle of @tarmac/sdk', () => {
  it('bundles for the browser with no Node built-ins and no ws', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../index.ts', import.meta.url))],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      conditions: ['source'],
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((i) => i.includes('sandbox/sandbox.ts'))).toBe(true);
    expect(
      inputs.filter((i) => i.startsWith('node:') || /node_modules\/ws\//.test(i) || i.includes('/src/node/')),
    ).toEqual([]);
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).not.toMatch(/from\s*["']node:|require\(["'](node:|ws["'])/);
  });

  it('fails when something Node-only is reachable (the check is real)', async () => {
    const error = await build({
      stdin: {
        contents: "import { readFileSync } from 'node:fs'; export const x = readFileSync;",
        resolveDir: '.',
      },
      bundle: true,
      write: false,
      platform: 'browser',
      logLevel: 'silent',
    }).catch((e: unknown) => e);
    expect(String(error)).toMatch(/node:fs/);
  });
});
