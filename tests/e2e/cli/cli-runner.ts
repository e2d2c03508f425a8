// Runs the built `tarmac` binary (apps/cli/dist/tarmac.mjs and the bundle it imports) the way a user or script does.
import { spawn } from 'node:child_process';
import { CLI_MAIN } from '../support/platform.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment for the CLI: nothing inherited that could point it at another platform. */
export function cliEnv(extra: Record<string, string>): Record<string, string> {
  const { PATH = '/usr/bin:/bin', HOME = '/tmp' } = process.env;
  return { PATH, HOME, ...extra };
}

export function runCli(
  args: string[],
  options: { env: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], {
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tarmac ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
