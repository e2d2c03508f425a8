// The sandbox commands of the built CLI against a real sandbox on the real platform (no URL
// overrides: the CLI reaches the sandbox at its host-style *.localhost URL through the gateway).
// Needs what real sandboxes need (root, runc, engine tools); skipped, saying which, without.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localhostFetch } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, type RunningPlatform } from '../support/platform.js';
import { missingCapability } from '../sandboxes/support.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';
import { cliEnv, runCli } from './cli-runner.js';

const missing = missingCapability();
if (missing) console.warn(`cli platform-sandbox.test.ts skipped: ${missing}`);

describe.skipIf(missing !== null)('tarmac sandbox commands on a real sandbox', () => {
  let platform: RunningPlatform;
  let env: Record<string, string>;
  const work = mkdtempSync(join(tmpdir(), 'tarmac-cli-sbx-'));
  const cli = (args: string[], timeoutMs = 60_000) => runCli(args, { env, timeoutMs });

  beforeAll(async () => {
    platform = await startTestPlatform({ bridge: 'tarmacclis0', subnet: '10.236.0.0/16' });
    env = cliEnv({ TARMAC_HOME: platform.home });
  }, 180_000);
  afterAll(async () => {
    expect(await stopTestPlatform(platform)).toEqual([]);
    removeHome(work);
  }, 120_000);

  it('creates a sandbox, waiting until it is ready, and shows it', async () => {
    const created = await cli(
      ['sandbox', 'create', 'web', '-p', '8000', '-e', 'GREETING=hello', '--memory', '512'],
      150_000,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('✓ Sandbox web is ready');
    expect(created.stdout).toMatch(/^web\tDEPLOYED\thttp:\/\/sbx-web-default\.[a-z0-9-]+\.localhost:\d+\n$/);
    expect((await cli(['get', 'sandboxes'])).stdout).toMatch(/^web\s+DEPLOYED\s/m);
  }, 180_000);

  it('execs with the sandbox env and exit codes, copies files both ways, shows logs', async () => {
    const exec = await cli([
      'sandbox',
      'exec',
      'web',
      '--',
      'sh',
      '-c',
      'echo "$GREETING"; echo oops >&2; exit 5',
    ]);
    expect([exec.code, exec.stdout, exec.stderr]).toEqual([5, 'hello\n', 'oops\n']);

    writeFileSync(join(work, 'index.html'), '<h1>from the cli</h1>');
    expect((await cli(['sandbox', 'cp', join(work, 'index.html'), 'web:/srv/www/'])).code).toBe(0);
    expect((await cli(['sandbox', 'cp', 'web:/srv/www/index.html', join(work, 'back.html')])).code).toBe(0);
    expect(readFileSync(join(work, 'back.html'), 'utf8')).toBe('<h1>from the cli</h1>');

    const missingFile = await cli(['sandbox', 'cp', 'web:/no/such/file', work]);
    expect(missingFile.code).toBe(3);
    expect(missingFile.stderr).toMatch(/^tarmac: copy web:\/no\/such\/file to \S+: .*\(HTTP 404 not_found\)/);
  });

  it('serves a port through a preview made by `tarmac preview create`', async () => {
    const server = await cli([
      'sandbox',
      'exec',
      'web',
      '--',
      'nohup python3 -m http.server 8000 --directory /srv/www >/tmp/http.log 2>&1 & sleep 1; echo started',
    ]);
    expect(server.stdout).toBe('started\n');
    const preview = await cli(['preview', 'create', 'web', 'site', '--port', '8000']);
    expect(preview.code, preview.stderr).toBe(0);
    const url = preview.stdout.trim();
    const page = await localhostFetch()(`${url}/index.html`);
    expect(await page.text()).toBe('<h1>from the cli</h1>');
  });

  it('starts a named process in the background, prints and follows its logs', async () => {
    const started = await cli([
      'sandbox',
      'exec',
      'web',
      '--name',
      'ticker',
      '--detach',
      '--',
      'for i in 1 2 3; do echo tick$i; sleep 0.3; done; echo done >&2',
    ]);
    expect([started.code, started.stdout]).toEqual([0, 'ticker\n']);
    const followed = await cli(['sandbox', 'logs', 'web', 'ticker', '-f']);
    expect([followed.code, followed.stdout, followed.stderr]).toEqual([0, 'tick1\ntick2\ntick3\n', 'done\n']);
    const all = await cli(['sandbox', 'logs', 'web', 'ticker']);
    expect(all.stdout).toBe('tick1\ntick2\ntick3\ndone\n');
    expect((await cli(['sandbox', 'logs', 'web', 'no-such-process'])).code).toBe(3);
  });

  it('deletes the sandbox', async () => {
    const deleted = await cli(['sandbox', 'delete', 'web']);
    expect([deleted.code, deleted.stdout]).toEqual([0, 'Sandbox web deleted\n']);
  });
});
