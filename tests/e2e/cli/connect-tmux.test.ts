// `tarmac sandbox connect` used as a person uses it: in a real terminal (tmux), typing commands
// and reading the screen. Where real sandboxes can run, the sandbox is a real one on the platform,
// reached through the gateway; elsewhere its API is the real sandboxd run as a local process
// (named with TARMAC_SANDBOX_BOX_URL). Either way the shell is a real PTY.
// Needs tmux (Debian package `tmux`); skipped, saying so, on machines without it.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';
import { startSandboxd, type LocalSandboxd } from '../sdk/sandboxd.js';
import { missingCapability } from '../sandboxes/support.js';
import { cliEnv, runCli } from './cli-runner.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();
if (!hasTmux) console.warn('connect-tmux.test.ts skipped: tmux is not installed (apt-get install tmux)');

const session = `tarmac-connect-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', session, ...args]).toString();
const screen = () => tmux('capture-pane', '-p', '-t', session);
const type = (text: string) => tmux('send-keys', '-t', session, '-l', text);
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
const key = (name: string) => tmux('send-keys', '-t', session, name);

describe.skipIf(!hasTmux)('tarmac sandbox connect in tmux', () => {
  let platform: RunningPlatform;
  let daemon: LocalSandboxd | undefined;

  beforeAll(async () => {
    let env: Record<string, string>;
    platform = await startTestPlatform({ bridge: 'tarmactty0', subnet: '10.235.0.0/16' });
    if (missingCapability() === null) {
      env = cliEnv({ TARMAC_HOME: platform.home });
      expect((await runCli(['sandbox', 'create', 'box'], { env, timeoutMs: 150_000 })).code).toBe(0);
    } else {
      daemon = await startSandboxd();
      env = cliEnv({ TARMAC_HOME: platform.home, TARMAC_SANDBOX_BOX_URL: daemon.url });
      expect((await runCli(['sandbox', 'create', 'box', '--no-wait'], { env })).code).toBe(0);
    }
    const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    // remain-on-exit keeps the pane after the CLI exits, so its exit status can be read.
    tmux(
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '120',
      '-y',
      '40',
      // The pane's shell reports the CLI's exit status on the screen, where a person reads it.
      'sh',
      '-c',
      `env ${vars.map(quote).join(' ')} ${quote(process.execPath)} ${quote(CLI_MAIN)} sandbox connect box --shell /bin/sh; echo "[tarmac exited $?]"`,
    );
    tmux('set-option', '-t', session, 'remain-on-exit', 'on');
    // A detached session sizes its window itself; manual sizing lets the test resize it.
    tmux('set-option', '-t', session, 'window-size', 'manual');
    // Type only once the remote shell has drawn its prompt, as a person would.
    const deadline = Date.now() + 15_000;
    while (!/^[$#]\s*$/m.test(screen())) {
      if (Date.now() > deadline) throw new Error(`no prompt on the screen:\n${screen()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    await daemon?.stop();
    expect(await stopTestPlatform(platform)).toEqual([]);
  }, 120_000);

  it('runs a typed command and shows its output on the screen', async () => {
    type('echo hello-$((6*7))');
    key('Enter');
    await expect.poll(screen, { timeout: 15_000 }).toMatch(/^hello-42\s*$/m);
  });

  it('knows the terminal size and follows a resize', async () => {
    type('stty size');
    key('Enter');
    await expect.poll(screen, { timeout: 10_000 }).toMatch(/^40 120\s*$/m);
    tmux('resize-window', '-t', session, '-x', '100', '-y', '30');
    type('stty size');
    key('Enter');
    await expect.poll(screen, { timeout: 10_000 }).toMatch(/^30 100\s*$/m);
    tmux('resize-window', '-t', session, '-x', '120', '-y', '40');
  });

  it('passes Ctrl-C to the remote command instead of quitting', async () => {
    type('sleep 30; echo not-interrupted');
    key('Enter');
    await new Promise((r) => setTimeout(r, 500));
    key('C-c');
    type('echo still-connected');
    key('Enter');
    await expect.poll(screen, { timeout: 10_000 }).toMatch(/^still-connected\s*$/m);
    // The typed line holds the words too; the echo's own output line must not appear.
    expect(screen()).not.toMatch(/^not-interrupted\s*$/m);
  });

  it('ends with exit code 0 when the remote shell exits', async () => {
    type('exit');
    key('Enter');
    await expect.poll(screen, { timeout: 20_000 }).toMatch(/^\[tarmac exited 0\]\s*$/m);
  });
});
