// Helpers for core e2e tests that start the platform in ways startPlatform does not (through the
// CLI binary, without --port/--home, on another host address).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, type Credentials } from '../support/platform.js';

/**
 * Environment for a platform in these tests: its own egress proxy port, so it can run beside other
 * platforms on this host (the default, 3128 on the sandbox bridge, is one per host).
 */
export async function isolatedEnv(): Promise<Record<string, string>>;
export async function isolatedEnv<T extends Record<string, string | undefined>>(
  extra: T,
): Promise<Record<string, string> & T>;
export async function isolatedEnv(extra: Record<string, string | undefined> = {}) {
  // No warm pool (issue 20): these platforms start with fresh homes and no image, as startPlatform's.
  return { TARMAC_EGRESS_PORT: String(await freePort()), TARMAC_POOL: 'off', ...extra };
}

export interface Spawned {
  output(): string;
  exited: Promise<number>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export function spawnNode(args: string[], env: Record<string, string | undefined>): Spawned {
  const child = spawn(process.execPath, args, {
    // An `undefined` value removes the variable (e.g. TARMAC_HOME for the ~/.tarmac default).
    env: Object.fromEntries(
      Object.entries({ ...process.env, TARMAC_LOG_LEVEL: 'warn', ...env }).filter(([, v]) => v !== undefined),
    ),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGKILL' ? 137 : 143))),
  );
  return {
    output: () => output,
    exited,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until `url/health` answers and `home/credentials.json` exists; returns the credentials. */
export async function waitForPlatform(proc: Spawned, url: string, home: string): Promise<Credentials> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`platform exited early:\n${proc.output()}`);
    try {
      if ((await fetch(`${url}/health`)).ok && existsSync(join(home, 'credentials.json'))) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.stop('SIGKILL');
      throw new Error(`platform did not become healthy at ${url}:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')) as Credentials;
}
