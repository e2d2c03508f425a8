// The sandbox commands of the built `tarmac` binary (exec, cp, logs, previews) and shell
// completion. The sandbox record lives on the real platform; its API is the real sandboxd run
// locally and named with TARMAC_SANDBOX_BOX_URL, so this runs on machines without containers too
// (platform-sandbox.test.ts covers the same commands on a real sandbox).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tarmac } from '@tarmac/sdk';
import { createClient } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';
import { startSandboxd, type LocalSandboxd } from '../sdk/sandboxd.js';
import { cliEnv, runCli } from './cli-runner.js';

let platform: RunningPlatform;
let tarmac: Tarmac;
let daemon: LocalSandboxd;
let env: Record<string, string>;
const work = mkdtempSync(join(tmpdir(), 'tarmac-cli-'));

beforeAll(async () => {
  platform = await startTestPlatform({ bridge: 'tarmacc1', subnet: '10.243.0.0/16' });
  daemon = await startSandboxd();
  const { apiUrl, apiKey } = platform.credentials;
  tarmac = new Tarmac({ apiUrl, apiKey, workspace: 'default' });
  // The platform's own home holds credentials.json: the CLI finds everything there.
  env = cliEnv({ TARMAC_HOME: platform.home, TARMAC_SANDBOX_BOX_URL: daemon.url });
});
afterAll(async () => {
  await daemon?.stop();
  expect(await stopTestPlatform(platform)).toEqual([]);
  removeHome(work);
}, 120_000);

const cli = (args: string[], input?: string) =>
  runCli(args, { env, ...(input !== undefined ? { input } : {}) });

describe('sandbox commands', () => {
  beforeAll(async () => {
    const created = await cli([
      'sandbox',
      'create',
      'box',
      '--no-wait',
      '-p',
      '3000',
      '-e',
      'GREETING=hi',
      '-o',
      'json',
    ]);
    expect(created.code).toBe(0);
  });

  it('creates the sandbox record with ports and env', async () => {
    const box = await tarmac.sandboxes.get('box');
    expect(box.spec.runtime?.ports?.[0]?.target).toBe(3000);
    expect(box.spec.runtime?.envs?.[0]).toMatchObject({ name: 'GREETING', value: 'hi' });
  });

  it('exec streams stdout and stderr separately and exits with the command’s code', async () => {
    const result = await cli([
      'sandbox',
      'exec',
      'box',
      '--',
      'sh',
      '-c',
      'echo to-out; echo to-err >&2; exit 7',
    ]);
    expect([result.code, result.stdout, result.stderr]).toEqual([7, 'to-out\n', 'to-err\n']);
    const shellLine = await cli(['sandbox', 'exec', 'box', '--', 'echo a b | wc -w']);
    expect([shellLine.code, shellLine.stdout.trim()]).toEqual([0, '2']);
  });

  it('copies files in both directions and prints process logs', async () => {
    const local = join(work, 'up.txt');
    writeFileSync(local, 'payload\n');
    // This sandboxd runs on the host (startSandboxd): the box's side is a directory of this test's.
    const inBox = join(work, 'in-box');
    mkdirSync(inBox);
    expect((await cli(['sandbox', 'cp', local, `box:${inBox}/`])).code).toBe(0);
    expect((await cli(['sandbox', 'exec', 'box', '--', `cat ${inBox}/up.txt`])).stdout).toBe('payload\n');
    const back = join(work, 'down');
    mkdirSync(back);
    expect((await cli(['sandbox', 'cp', `box:${inBox}/up.txt`, back])).code).toBe(0);
    expect(readFileSync(join(back, 'up.txt'), 'utf8')).toBe('payload\n');
    const both = await cli(['sandbox', 'cp', local, back]);
    expect(both.code).toBe(2);

    // The SDK configured like the CLI (credentials.json + TARMAC_SANDBOX_BOX_URL) starts the process.
    const sdk = await createClient({ env: { TARMAC_SANDBOX_BOX_URL: daemon.url }, home: platform.home });
    const box = await sdk.sandboxes.get('box');
    await box.process.exec({ command: 'echo logged; echo oops >&2', name: 'job1', waitForCompletion: true });
    const logs = await cli(['sandbox', 'logs', 'box', 'job1']);
    expect(logs.stdout).toBe('logged\noops\n');
    const follow = await cli(['sandbox', 'logs', 'box', 'job1', '-f']);
    expect([follow.stdout, follow.stderr]).toEqual(['logged\n', 'oops\n']);
  });

  it('connect reads a script from a pipe and exits at its end', async () => {
    const piped = await cli(['sandbox', 'connect', 'box', '--shell', '/bin/sh'], 'echo piped-$((1+1))\n');
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('piped-2');
  });

  it('creates, lists and deletes previews', async () => {
    const created = await cli(['preview', 'create', 'box', 'web', '--port', '3000']);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^http/);
    const priv = await cli(['preview', 'create', 'box', 'secret', '--port', '3000', '--private']);
    expect(priv.stdout).toMatch(/^token: \S+$/m);
    expect((await cli(['preview', 'list', 'box'])).stdout).toMatch(/^web\s+3000\s+true\s/m);
    expect((await cli(['preview', 'delete', 'box', 'web', 'secret'])).stdout).toBe(
      'Preview web deleted\nPreview secret deleted\n',
    );
  });
});

describe('shell completion', () => {
  it('prints a bash script that completes commands and resource types', async () => {
    const script = (await cli(['completion', 'bash'])).stdout;
    const file = join(work, 'completion.bash');
    writeFileSync(file, script);
    const complete = (line: string) =>
      execFileSync('bash', [
        '-c',
        `source ${file}; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _tarmac; echo "\${COMPREPLY[*]}"`,
      ])
        .toString()
        .trim();
    expect(complete('tarmac ge')).toBe('get');
    expect(complete('tarmac get sandb')).toBe('sandboxes sandbox');
    expect(complete('tarmac sandbox co')).toBe('connect');
  });
});
