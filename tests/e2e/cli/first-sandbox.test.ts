// Runs the commands of the README section "First sandbox in 60 seconds" exactly as written, in a
// fresh TARMAC_HOME: `tarmac up` from the first sh block, every line of the second, and the
// TypeScript example, as README.md has them. Needs what real sandboxes need (root, runc,
// engine tools); skipped, saying which, without.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, REPO_ROOT, freePort, removeHome, type RunningPlatform } from '../support/platform.js';
import { stopTestPlatform } from '../sdk/fixture.js';
import { E2E_NETWORK, IMAGE_CACHE, missingCapability } from '../sandboxes/support.js';

const TITLE = 'First sandbox in 60 seconds';

/** The section's fenced blocks, by language, in order. */
function sectionBlocks(markdown: string, title: string): { lang: string; code: string }[] | undefined {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#+\\s+${title}\\s*$`).test(l));
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const end = lines.findIndex(
    (l, i) => i > start && /^#+\s/.test(l) && (/^#+/.exec(l)?.[0].length ?? 9) <= level,
  );
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  return [...body.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

function loadSection() {
  const blocks = sectionBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), TITLE);
  if (!blocks) throw new Error(`README.md has no section "${TITLE}"`);
  return blocks;
}

const missing = missingCapability();
if (missing) console.warn(`first-sandbox.test.ts skipped: ${missing}`);

describe.skipIf(missing !== null)(`README: ${TITLE}`, () => {
  const blocks = loadSection();
  const shell = blocks
    .filter((b) => b.lang === 'sh')
    .map((b) => b.code.split('\n').filter((l) => l.trim() && !l.startsWith('#')));
  const root = mkdtempSync(join(tmpdir(), 'tarmac-first-'));
  const home = join(root, 'home');
  const cwd = join(root, 'cwd');
  const bin = join(root, 'bin');
  let up: ChildProcess | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    mkdirSync(cwd);
    mkdirSync(bin);
    // `tarmac` on PATH is the built CLI, as after `npm install -g`.
    writeFileSync(join(bin, 'tarmac'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_MAIN}" "$@"\n`);
    chmodSync(join(bin, 'tarmac'), 0o755);
    env = {
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: root,
      TARMAC_HOME: home,
      TARMAC_PORT: String(await freePort()),
      TARMAC_IMAGE_DIR: IMAGE_CACHE,
      TARMAC_LOG_LEVEL: 'warn',
      ...E2E_NETWORK,
      TARMAC_BRIDGE: 'tarmacfirst0',
      TARMAC_SUBNET: '10.233.0.0/16',
    };
    const [upLine] = shell[0] ?? [];
    expect(upLine).toBe('tarmac up');
    up = spawn('bash', ['-c', `exec ${upLine}`], { cwd, env, stdio: 'ignore' });
    const deadline = Date.now() + 120_000;
    while (!existsSync(join(home, 'credentials.json'))) {
      if (up.exitCode !== null) throw new Error(`tarmac up exited with ${up.exitCode}`);
      if (Date.now() > deadline) throw new Error('tarmac up did not write credentials.json');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);
  afterAll(async () => {
    const running = up;
    const stop = async () => {
      if (running && running.exitCode === null) {
        const exited = new Promise<number>((r) => running.once('exit', (code) => r(code ?? 0)));
        running.kill('SIGTERM');
        return exited;
      }
      return 0;
    };
    const credentials = JSON.parse(
      readFileSync(join(home, 'credentials.json'), 'utf8'),
    ) as RunningPlatform['credentials'];
    // Deletes what the README's commands left (nothing, when they all ran), then stops `tarmac up`.
    expect(await stopTestPlatform({ credentials, home, stop })).toEqual([]);
    try {
      removeHome(root);
    } catch {
      // a mount released a moment late; /tmp is cleaned anyway
    }
  }, 120_000);

  it('has the platform block and the sandbox block', () => {
    expect(shell).toHaveLength(2);
    expect(shell[1]?.some((l) => l.startsWith('tarmac sandbox create'))).toBe(true);
  });

  it('runs every command of the second block successfully, within a minute', () => {
    const started = Date.now();
    for (const line of shell[1] ?? []) {
      const interactive = line.includes('sandbox connect');
      // A person would type into the shell; here stdin is a script (no TTY, so no raw mode).
      const input = interactive ? 'echo connected-$((40+2))\nexit\n' : '';
      const run = spawnSync('bash', ['-c', line], { cwd, env, input, encoding: 'utf8', timeout: 120_000 });
      expect(run.status, `${line}\n${run.stdout}${run.stderr}`).toBe(0);
      if (line.includes('echo "Hello from the sandbox"')) expect(run.stdout).toBe('Hello from the sandbox\n');
      if (line.includes('cat /tmp/notes.txt')) expect(run.stdout).toBe('some notes\n');
      if (interactive) expect(run.stdout).toContain('connected-42');
    }
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 180_000);

  it('runs the TypeScript example', () => {
    const example = blocks.find((b) => b.lang === 'ts')?.code ?? '';
    expect(example).toContain("from '@tarmac/sdk'");
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', example], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Linux /);
  }, 180_000);
});
