// Runs the real, built sandbox daemon (packages/sandboxd/dist/main.js) as a plain local process:
// the sandbox API exactly as it runs inside a sandbox, minus the container. SDK and CLI tests use
// it for the data-plane methods when the platform in the test cannot start sandboxes itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, freePort } from '../support/platform.js';

export const SANDBOXD_MAIN = join(REPO_ROOT, 'packages/sandboxd/dist/main.js');

export interface LocalSandboxd {
  url: string;
  /** The daemon's working directory (relative paths resolve here). */
  root: string;
  stop(): Promise<void>;
}

export async function startSandboxd(): Promise<LocalSandboxd> {
  const root = mkdtempSync(join(tmpdir(), 'tarmac-sandboxd-'));
  const work = join(root, 'work');
  mkdirSync(work);
  mkdirSync(join(root, 'logs'));
  mkdirSync(join(root, 'tmp')); // its multipart uploads: removed with root
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [SANDBOXD_MAIN, '--port', String(port)], {
    cwd: work,
    env: {
      ...process.env,
      HOME: work,
      TMPDIR: join(root, 'tmp'),
      SANDBOX_LOG_DIR: join(root, 'logs'),
      SHELL: '/bin/sh',
      PS1: '$ ',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sandboxd exited early:\n${output}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`sandboxd did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    root: work,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
