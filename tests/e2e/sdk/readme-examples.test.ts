// Runs every `ts` example of packages/sdk/README.md as a Node module against the real platform,
// configured only by TARMAC_HOME (its credentials.json), as a reader would run them. Examples
// marked `// needs: sandboxes` run where real sandboxes can (root, runc, engine tools).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type RunningPlatform } from '../support/platform.js';
import { missingCapability } from '../sandboxes/support.js';
import { startTestPlatform, stopTestPlatform } from './fixture.js';

const readme = readFileSync(join(REPO_ROOT, 'packages/sdk/README.md'), 'utf8');
const examples = [...readme.matchAll(/^## (.+)$|```ts\n([\s\S]*?)```/gm)]
  .reduce<{ title: string; code: string }[]>((list, m) => {
    if (m[1]) list.push({ title: m[1], code: '' });
    else if (m[2] && list.length) list.push({ title: list.at(-1)?.title ?? '', code: m[2] });
    return list;
  }, [])
  .filter((e) => e.code);
const missing = missingCapability();

describe('packages/sdk/README.md examples', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ bridge: 'tarmacdoc0', subnet: '10.234.0.0/16' });
  }, 180_000);
  afterAll(async () => {
    expect(await stopTestPlatform(platform)).toEqual([]);
  }, 120_000);

  it('has examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
  });

  for (const [index, example] of examples.entries()) {
    const needsSandboxes = example.code.startsWith('// needs: sandboxes');
    it.skipIf(needsSandboxes && missing !== null)(
      `example ${index + 1} (${example.title}) runs`,
      () => {
        const run = spawnSync(process.execPath, ['--input-type=module', '-e', example.code], {
          cwd: REPO_ROOT,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: platform.home, TARMAC_HOME: platform.home },
          encoding: 'utf8',
          timeout: 150_000,
        });
        expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
        expect(run.stdout.trim()).not.toBe('');
      },
      180_000,
    );
  }
});
