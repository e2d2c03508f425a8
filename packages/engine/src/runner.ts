// How the engine runs host tools (runc, ip, mount, ...). Injected so callers control the
// environment and tests can observe commands; the default spawns real processes.
import { spawn } from 'node:child_process';
import { CommandError } from './errors.js';

export interface RunOptions {
  /** Written to the child's stdin. */
  input?: string;
  /** Resolve with the non-zero exit code instead of throwing. */
  allowFail?: boolean;
  /** File descriptors for the child's stdout/stderr instead of capturing them. */
  stdoutFd?: number;
  stderrFd?: number;
  /** New session, so the child and what it leaves behind outlive the platform's process group. */
  detached?: boolean;
  timeoutMs?: number;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandRunner {
  run(command: string, args: readonly string[], opts?: RunOptions): Promise<RunResult>;
}

export class ProcessRunner implements CommandRunner {
  /** env is passed whole to children: the engine never reads process.env itself. */
  constructor(private readonly env: Record<string, string | undefined> = { PATH: DEFAULT_PATH }) {}

  run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: this.env,
        detached: opts.detached ?? false,
        stdio: [
          opts.input === undefined ? 'ignore' : 'pipe',
          opts.stdoutFd ?? 'pipe',
          opts.stderrFd ?? 'pipe',
        ],
        timeout: opts.timeoutMs,
      });
      let stdout = '';
      let stderr = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        const rc = code ?? -1;
        if (rc !== 0 && !opts.allowFail) reject(new CommandError([command, ...args].join(' '), code, stderr));
        else resolve({ code: rc, stdout, stderr });
      });
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }
}

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
