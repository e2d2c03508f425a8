// The built `tarmac` binary against the real platform binary: basics and exit codes, login,
// workspaces, token, version, get/apply/delete. Sandbox commands: cli-sandboxd.test.ts and
// platform-sandbox.test.ts; the interactive shell: connect-tmux.test.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tarmac } from '@tarmac/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, freePort, removeHome, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';
import { cliEnv, runCli } from './cli-runner.js';

let platform: RunningPlatform;
let tarmac: Tarmac;
let env: Record<string, string>;
const work = mkdtempSync(join(tmpdir(), 'tarmac-cli-'));

beforeAll(async () => {
  platform = await startTestPlatform({ bridge: 'tarmacc0', subnet: '10.242.0.0/16' });
  const { apiUrl, apiKey } = platform.credentials;
  tarmac = new Tarmac({ apiUrl, apiKey, workspace: 'default' });
  // The platform's own home holds credentials.json: the CLI finds everything there.
  env = cliEnv({ TARMAC_HOME: platform.home });
});
afterAll(async () => {
  expect(await stopTestPlatform(platform)).toEqual([]);
  removeHome(work);
}, 120_000);

const cli = (args: string[], input?: string) =>
  runCli(args, { env, ...(input !== undefined ? { input } : {}) });

describe('basics and exit codes', () => {
  it('prints its version and documents exit codes in --help', async () => {
    expect((await cli(['version'])).stdout).toBe(
      `tarmac 0.1.0\nplatform 0.1.0 at ${platform.credentials.apiUrl}\n`,
    );
    const alone = await runCli(['version'], { env: cliEnv({ TARMAC_HOME: work }) });
    expect([alone.code, alone.stdout]).toEqual([0, 'tarmac 0.1.0\n']);
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes:');
    expect(help.stdout).toMatch(/sandbox\s/);
  });

  it('exits 2 on usage errors and unknown resource types, with one line saying what to do', async () => {
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const type = await cli(['get', 'gizmos']);
    expect(type.code).toBe(2);
    expect(type.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^tarmac: get gizmos: unknown resource type "gizmos" \(known types: sandboxes, /),
    ]);
    for (const memory of ['lots', '2t']) {
      const bad = await cli(['sandbox', 'create', 'mem-box', '--memory', memory, '--no-wait']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`invalid --memory "${memory}"`);
    }
  });

  it('exits 6 with a hint when the platform is unreachable', async () => {
    const result = await runCli(['get', 'workspaces'], {
      env: cliEnv({
        TARMAC_API_URL: `http://127.0.0.1:${await freePort()}`,
        TARMAC_API_KEY: 'ak_x',
        TARMAC_HOME: work,
      }),
    });
    expect(result.code).toBe(6);
    expect(result.stderr).toMatch(
      /^tarmac: get workspaces: .*ECONNREFUSED.*\(is the platform running\? start it with `tarmac up`\)\n$/,
    );
  });
});

describe('login, workspaces, token', () => {
  it('logs in with an API key from a flag or stdin, saving credentials.json with mode 0600', async () => {
    const home = join(work, 'login-home');
    const loginEnv = cliEnv({ TARMAC_HOME: home });
    const { apiUrl, apiKey } = platform.credentials;
    const bad = await runCli(['login', '--api-url', apiUrl, '--api-key', 'ak_wrong.key'], { env: loginEnv });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^tarmac: login: .*\(check your API key, or run `tarmac login`\)\n$/);

    const ok = await runCli(['login', '--api-url', apiUrl], { env: loginEnv, input: `${apiKey}\n` });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('workspace default');
    const saved = JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({
      apiUrl,
      apiKey,
      workspace: 'default',
      accountId: platform.credentials.accountId,
    });
    expect(statSync(join(home, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect((await runCli(['token'], { env: loginEnv })).stdout).toBe(`${apiKey}\n`);
  });

  it('logs in with service-account client credentials and prints a JWT as the token', async () => {
    const sa = await tarmac.serviceAccounts.create({ name: 'cli-bot', role: 'admin' });
    const loginEnv = cliEnv({ TARMAC_HOME: join(work, 'sa-home') });
    const login = await runCli(
      [
        'login',
        '--api-url',
        platform.credentials.apiUrl,
        '--client-id',
        sa.client_id,
        '--client-secret',
        sa.client_secret,
      ],
      { env: loginEnv },
    );
    expect(login.code).toBe(0);
    const token = (await runCli(['token'], { env: loginEnv })).stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    expect((await runCli(['get', 'workspaces', '-o', 'json'], { env: loginEnv })).code).toBe(0);
  });

  it('lists workspaces with the current one starred and switches between them', async () => {
    await tarmac.workspaces.create({ name: 'team' });
    const home = join(work, 'switch-home');
    const switchEnv = cliEnv({ TARMAC_HOME: home });
    await runCli(
      ['login', '--api-url', platform.credentials.apiUrl, '--api-key', platform.credentials.apiKey],
      { env: switchEnv },
    );
    expect((await runCli(['workspaces'], { env: switchEnv })).stdout).toMatch(/^\*\s+default\s/m);
    expect((await runCli(['workspaces', 'team'], { env: switchEnv })).stdout).toBe(
      'Switched to workspace team\n',
    );
    expect((await runCli(['workspaces', '--current'], { env: switchEnv })).stdout).toBe('team\n');
    expect((await runCli(['workspaces'], { env: switchEnv })).stdout).toMatch(/^\*\s+team\s/m);
    const missing = await runCli(['workspaces', 'nope'], { env: switchEnv });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('tarmac: switch to workspace nope: no such workspace (yours: ');
  });
});

describe('get, apply, delete', () => {
  it('shows resources as a table, JSON and YAML', async () => {
    const tableOut = await cli(['get', 'ws']);
    expect(tableOut.stdout.split('\n')[0]).toMatch(/^NAME\s+DISPLAY NAME\s+ROLE\s+AGE$/);
    const json = JSON.parse((await cli(['get', 'workspaces', 'default', '-o', 'json'])).stdout) as {
      name: string;
    };
    expect(json.name).toBe('default');
    expect((await cli(['get', 'workspace', 'default', '-o', 'yaml'])).stdout).toMatch(/^name: default$/m);
    const missing = await cli(['get', 'sandbox', 'nope']);
    expect(missing.code).toBe(3);
  });

  it('applies multi-document YAML with ${VAR} from a file, a directory and stdin; re-applying updates', async () => {
    const manifest = [
      'apiVersion: tarmac/v1alpha1',
      'kind: Sandbox',
      'metadata:',
      '  name: ${BOX_NAME}',
      '  labels: {team: "${TEAM:platform}"}',
      'spec:',
      '  runtime: {memory: 512, ports: [{target: 3000}]}',
      '---',
      'kind: Workspace',
      'metadata: {name: applied-ws, displayName: Applied}',
    ].join('\n');
    const file = join(work, 'stack.yaml');
    writeFileSync(file, manifest);
    const applyEnv = { ...env, BOX_NAME: 'applied-box' };
    const first = await runCli(['apply', '-f', file], { env: applyEnv });
    expect([first.code, first.stdout]).toEqual([
      0,
      'Sandbox applied-box created\nWorkspace applied-ws created\n',
    ]);
    const again = await runCli(['apply', '-f', file], { env: applyEnv });
    expect(again.stdout).toBe('Sandbox applied-box configured\nWorkspace applied-ws configured\n');
    const box = JSON.parse((await cli(['get', 'sbx', 'applied-box', '-o', 'json'])).stdout) as {
      metadata: { labels: Record<string, string> };
      spec: { runtime: { memory: number } };
    };
    expect([box.metadata.labels.team, box.spec.runtime.memory]).toEqual(['platform', 512]);

    const dir = join(work, 'manifests');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), 'kind: Sandbox\nmetadata: {name: from-dir}\nspec: {}\n');
    writeFileSync(join(dir, 'notes.txt'), 'not yaml');
    expect((await cli(['apply', '-f', dir])).stdout).toBe('Sandbox from-dir created\n');
    const stdin = await cli(['apply', '-f', '-'], 'kind: Sandbox\nmetadata: {name: from-stdin}\nspec: {}\n');
    expect(stdin.stdout).toBe('Sandbox from-stdin created\n');

    const unset = await runCli(['apply', '-f', file], { env });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('${BOX_NAME} is not set');

    const listed = await cli(['get', 'sandboxes']);
    expect(listed.stdout).toMatch(/^applied-box\s/m);
    const deleted = await cli(['delete', 'sandboxes', 'from-dir', 'from-stdin', 'ghost']);
    expect(deleted.stdout).toBe('Sandbox from-dir deleted\nSandbox from-stdin deleted\n');
    expect(deleted.stderr).toMatch(/^tarmac: delete sandboxes ghost: .*not found/);
    expect(deleted.code).toBe(3);
  });

  it('refreshes with --watch when something changes', async () => {
    const child = spawn(process.execPath, [CLI_MAIN, 'get', 'serviceaccounts', '--watch'], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await expect.poll(() => out, { timeout: 10_000 }).toContain('CLIENT ID');
      await tarmac.serviceAccounts.create({ name: 'watched-bot' });
      await expect.poll(() => out, { timeout: 10_000 }).toContain('watched-bot');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
