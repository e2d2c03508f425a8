// Issue 14 item 9: @tarmac/sdk and the CLI install outside the checkout. Runs the README section
// "Install the SDK and CLI in your project" as written: `npm run pack` in the checkout, `npm
// install` of the two tarballs into a scratch project under the system temp dir (no workspace, no
// node_modules of ours above it; from the local npm cache, --prefer-offline: this machine reaches
// only the registry), `npx tarmac up` there, then the installed `tarmac` command and the tour's
// TypeScript example against that platform. The platform starts on a host without the base image
// (its build in progress), so the first sandbox shows that wait in its events and in `tarmac
// sandbox create`'s output. Sandboxes need root, runc and the engine tools: the parts that create
// one are skipped, saying which, without them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, freePort, removeHome, type RunningPlatform } from '../support/platform.js';
import { stopTestPlatform } from '../sdk/fixture.js';
import { IMAGE_CACHE, missingCapability } from '../sandboxes/support.js';

const NETWORK = { TARMAC_BRIDGE: 'tarmacpack0', TARMAC_SUBNET: '10.159.0.0/16' };

/** The fenced blocks of the README section titled `title`, by language, in order. */
function sectionBlocks(title: string): { lang: string; code: string }[] {
  const lines = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#+\\s+${title}\\s*$`).test(l));
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const end = lines.findIndex(
    (l, i) => i > start && /^#+\s/.test(l) && (/^#+/.exec(l)?.[0].length ?? 9) <= level,
  );
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  return [...body.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

function run(command: string, cwd: string, env: NodeJS.ProcessEnv, timeout = 300_000) {
  const result = spawnSync('bash', ['-c', command], { cwd, env, encoding: 'utf8', timeout });
  expect(result.status, `${command}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

const missing = missingCapability();
if (missing) console.warn(`packed-install.test.ts: sandbox steps skipped: ${missing}`);

describe('README: Install the SDK and CLI in your project', () => {
  const [pack, install, up] = (sectionBlocks('Install the SDK and CLI in your project')[0]?.code ?? '')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
  const example = sectionBlocks('First sandbox in 60 seconds').find((b) => b.lang === 'ts')?.code ?? '';
  // Outside the repository: nothing above it resolves @tarmac/* from our workspace.
  const root = mkdtempSync(join(tmpdir(), 'tarmac-packed-'));
  const project = join(root, 'project');
  const home = join(root, 'home');
  // A host that has never built the base image: an empty image store whose build is in progress
  // (the store's cross-process lock held by this test); the test then "finishes" it by linking the
  // shared cache's image in. The first sandbox thus waits for a base-image build, as a new user's.
  const images = join(root, 'images');
  const buildLock = join(images, `.build-${encodeURIComponent('tarmac/base:latest')}.lock`);
  let env: NodeJS.ProcessEnv;
  let platform: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    mkdirSync(project);
    env = {
      ...process.env,
      TARMAC_HOME: home,
      TARMAC_PORT: String(await freePort()),
      TARMAC_EGRESS_PORT: String(await freePort()),
      TARMAC_IMAGE_DIR: images,
      TARMAC_LOG_LEVEL: 'warn',
      // Idle sandboxes go to STANDBY quickly, for `get sandboxes` to show it.
      TARMAC_STANDBY_AFTER: '2s',
      ...NETWORK,
      // Registry packages (ws, zod) from the local cache when it has them.
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    // vitest's own environment must not leak into the project's Node (NODE_OPTIONS loaders etc.).
    for (const key of Object.keys(env))
      if (key.startsWith('VITEST') || key === 'NODE_OPTIONS') delete env[key];
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-project', private: true }));
    mkdirSync(images);
    writeFileSync(buildLock, String(process.pid));
  }, 60_000);

  afterAll(async () => {
    const child = platform;
    if (child && existsSync(join(home, 'credentials.json'))) {
      const credentials = JSON.parse(
        readFileSync(join(home, 'credentials.json'), 'utf8'),
      ) as RunningPlatform['credentials'];
      // Ctrl-C in the terminal: SIGINT to the whole process group (npx's shell does not pass a
      // signal sent to npx alone on), then wait until every process of it has exited.
      const stop = async () => {
        const group = -(child.pid ?? 0);
        try {
          process.kill(group, 'SIGINT');
        } catch {
          return child.exitCode ?? 0;
        }
        const deadline = Date.now() + 30_000;
        for (;;) {
          try {
            process.kill(group, 0);
          } catch {
            return child.exitCode ?? 0;
          }
          if (Date.now() > deadline) throw new Error(`tarmac up did not stop on SIGINT:\n${output}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      expect(await stopTestPlatform({ credentials, home, stop })).toEqual([]);
    } else if (child?.pid) process.kill(-child.pid, 'SIGKILL');
    removeHome(root);
  }, 120_000);

  it('has the three lines: pack, install, up', () => {
    expect(pack).toBe('npm run pack');
    expect(install).toMatch(/^npm install \/path\/to\/tarmac\/dist-pack\/tarmac-sdk-[\d.]+\.tgz /);
    expect(up).toBe('npx tarmac up');
  });

  it('packs in the checkout and installs into a project outside it', () => {
    run(pack ?? '', REPO_ROOT, env, 600_000);
    run((install ?? '').replaceAll('/path/to/tarmac', REPO_ROOT), project, env);
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { link?: boolean }>;
    };
    // Real copies from the tarballs, not links into the workspace.
    expect(lock.packages['node_modules/@tarmac/sdk']?.link).toBeUndefined();
    expect(Object.keys(lock.packages).filter((p) => p.includes('@tarmac/'))).toEqual([
      'node_modules/@tarmac/cli',
      'node_modules/@tarmac/sdk',
    ]);
    expect(run('npx tarmac --version', project, env).trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 900_000);

  it('starts the platform with `npx tarmac up` from the project', async () => {
    expect(existsSync(join(project, 'node_modules/.bin/tarmac'))).toBe(true);
    platform = spawn('bash', ['-c', up ?? ''], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, as a terminal's foreground job
    });
    platform.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    platform.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (platform.exitCode !== null) throw new Error(`tarmac up exited (${platform.exitCode}):\n${output}`);
      const health = await fetch(`http://127.0.0.1:${env.TARMAC_PORT}/health`).catch(() => undefined);
      if (health?.ok && existsSync(join(home, 'credentials.json'))) break;
      if (Date.now() > deadline) throw new Error(`tarmac up did not become healthy:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The installed CLI talks to it (credentials from TARMAC_HOME).
    expect(run('npx tarmac get sandboxes', project, env)).toBe('No sandboxes found.\n');
  }, 180_000);

  it.skipIf(missing !== null)(
    'the first sandbox shows the base-image build while it waits, then runs',
    async () => {
      const create = spawn('bash', ['-c', 'npx tarmac sandbox create packed-cli'], { cwd: project, env });
      let stderr = '';
      create.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const created = new Promise<number | null>((resolve) => create.once('exit', resolve));
      // The create events say what it waits for (issue 14 item 9).
      const credentials = JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')) as {
        apiKey: string;
      };
      const deadline = Date.now() + 60_000;
      let events: { type: string; status: string; message: string }[] = [];
      while (!events.some((e) => e.type === 'BuildingImage')) {
        if (Date.now() > deadline) throw new Error(`no BuildingImage event: ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 250));
        const res = await fetch(`http://127.0.0.1:${env.TARMAC_PORT}/v0/sandboxes/packed-cli`, {
          headers: { authorization: `Bearer ${credentials.apiKey}` },
        });
        if (res.ok) events = ((await res.json()) as { events: typeof events }).events;
      }
      expect(events.find((e) => e.type === 'BuildingImage')).toMatchObject({
        status: 'DEPLOYING',
        message: expect.stringContaining('Building the base image tarmac/base:latest'),
      });
      // "Finish" the build: the cached image appears whole (image.json last), the lock goes.
      const dir = encodeURIComponent('tarmac/base:latest');
      const staged = join(images, `.staged-${dir}`);
      run(
        `cp -al '${join(IMAGE_CACHE, dir)}' '${staged}' && mv '${staged}' '${join(images, dir)}'`,
        root,
        env,
      );
      rmSync(buildLock);
      expect(await created, stderr).toBe(0);
      expect(stderr).toContain('Building the base image tarmac/base:latest');
      expect(stderr).toContain('Sandbox packed-cli is ready');
      expect(run('npx tarmac sandbox exec packed-cli -- echo from-packed-cli', project, env)).toBe(
        'from-packed-cli\n',
      );
      // Created without --image: the IMAGE column names the base image it runs (issue 14 item 9).
      const until = Date.now() + 30_000;
      let listed = '';
      while (!/^packed-cli\s+STANDBY\s/m.test(listed) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        listed = run('npx tarmac get sandboxes', project, env);
      }
      expect(listed).toMatch(/^packed-cli\s+STANDBY\s+tarmac\/base:latest\s/m);
      run('npx tarmac delete sandbox packed-cli', project, env);
    },
    300_000,
  );

  it.skipIf(missing !== null)(
    "runs the tour's TypeScript example in the project",
    () => {
      expect(example).toContain("from '@tarmac/sdk'");
      writeFileSync(join(project, 'example.mjs'), example);
      const result = spawnSync(process.execPath, ['example.mjs'], {
        cwd: project,
        env,
        encoding: 'utf8',
        timeout: 150_000,
      });
      expect(result.status, `${result.stderr}\n${output}`).toBe(0);
      expect(result.stdout).toMatch(/^Linux /);
    },
    180_000,
  );
});
