// Starts the real, built platform binary (apps/platform/dist/main.js) as a child process on a free
// port with its own TARMAC_HOME, and reads the credentials it writes. End-to-end tests use this.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface Credentials {
  apiUrl: string;
  runUrl: string;
  workspace: string;
  accountId: string;
  apiKey: string;
}

export interface RunningPlatform {
  url: string;
  port: number;
  /** The platform process's id (benches read its CPU time from /proc). */
  pid: number;
  home: string;
  credentials: Credentials;
  /** Everything the process wrote to stderr and stdout so far. */
  output(): string;
  /** Sends `signal` and resolves with the exit code (or 128+n when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number>;
  /** Fetch against the platform with the admin key and the default workspace. */
  api(path: string, init?: RequestInit & { version?: string }): Promise<Response>;
}

export interface StartOptions {
  /** Reuse a home from an earlier run (restart tests). */
  home?: string;
  port?: number;
  env?: Record<string, string>;
  args?: string[];
  /** Another build's apps/platform/dist/main.js (bench/sandbox-ab.ts runs a baseline checkout). */
  main?: string;
  /** How long to wait for credentials.json and /health. */
  timeoutMs?: number;
}

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const PLATFORM_MAIN = join(REPO_ROOT, 'apps/platform/dist/main.js');
/** The `tarmac` command as users run it: the one-file bundle (apps/cli/scripts/bundle.mjs). */
export const CLI_MAIN = join(REPO_ROOT, 'apps/cli/dist/tarmac.mjs');

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'tarmac-e2e-'));
}

export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}

export async function startPlatform(options: StartOptions = {}): Promise<RunningPlatform> {
  const home = options.home ?? tempHome();
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn(
    process.execPath,
    [options.main ?? PLATFORM_MAIN, '--port', String(port), '--home', home, ...(options.args ?? [])],
    {
      env: {
        ...process.env,
        TARMAC_LOG_LEVEL: 'warn',
        // Each platform its own egress proxy port, so platforms of different tests never clash.
        TARMAC_EGRESS_PORT: String(await freePort()),
        // One base-image cache per machine: a fresh home must not rebuild the image (~30 s, 370 MB).
        TARMAC_IMAGE_DIR: process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images',
        // The warm pool (issue 20) boots sandboxes at start; files that test it turn it on.
        TARMAC_POOL: 'off',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit(code ?? (signal === 'SIGKILL' ? 137 : 143))),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`platform exited early (${child.exitCode}):\n${output}`);
    try {
      const health = await fetch(`${url}/health`);
      if (health.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`platform did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const credentials = JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')) as Credentials;
  return {
    url,
    port,
    pid: child.pid ?? 0,
    home,
    credentials,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    api(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${credentials.apiKey}`);
      if (init.version) headers.set('service-version', init.version);
      if (init.body !== undefined && !headers.has('content-type'))
        headers.set('content-type', 'application/json');
      return fetch(`${url}${path}`, { ...init, headers });
    },
  };
}
