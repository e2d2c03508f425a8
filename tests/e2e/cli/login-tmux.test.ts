// `tarmac login` on a real terminal (tmux): it prompts for the API key, does not echo it, and
// saves it. Needs tmux (Debian package `tmux`); skipped, saying so, on machines without it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, removeHome, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();
if (!hasTmux) console.warn('login-tmux.test.ts skipped: tmux is not installed (apt-get install tmux)');

const session = `tarmac-login-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', session, ...args]).toString();
const screen = () => tmux('capture-pane', '-p', '-t', session);

describe.skipIf(!hasTmux)('tarmac login on a terminal', () => {
  let platform: RunningPlatform;
  const home = mkdtempSync(join(tmpdir(), 'tarmac-login-'));

  beforeAll(async () => {
    platform = await startTestPlatform({ bridge: 'tarmacc2', subnet: '10.244.0.0/16' });
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    expect(await stopTestPlatform(platform)).toEqual([]);
    removeHome(home);
  });

  it('prompts for the key without echoing it and saves it', async () => {
    const { apiUrl, apiKey } = platform.credentials;
    tmux(
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '150',
      '-y',
      '10',
      // The pane's shell reports the CLI's exit status on the screen.
      'sh',
      '-c',
      `env TARMAC_HOME='${home}' PATH='${process.env.PATH ?? ''}' '${process.execPath}' '${CLI_MAIN}' login --api-url '${apiUrl}'; echo "[tarmac exited $?]"`,
    );
    tmux('set-option', '-t', session, 'remain-on-exit', 'on');
    await expect.poll(screen, { timeout: 10_000 }).toMatch(/^API key:/m);
    tmux('send-keys', '-t', session, '-l', apiKey);
    tmux('send-keys', '-t', session, 'Enter');
    await expect.poll(screen, { timeout: 10_000 }).toContain('Logged in to');
    expect(screen()).not.toContain(apiKey);
    await expect.poll(screen, { timeout: 10_000 }).toMatch(/^\[tarmac exited 0\]\s*$/m);
    expect(JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8'))).toMatchObject({
      apiKey,
      workspace: 'default',
    });
  });
});
