// The waits of POST /process (reference sandbox-api.md §1.3 "timeout", "waitForPorts"): a
// deadline on the wait only; expiry is a 422 and the process keeps running.
import { unprocessable } from '../http/errors.js';
import type { ManagedProcess } from './manager.js';
import { routableListeningPorts } from './ports.js';

/** Resolves 'done' | 'timeout'; timeoutSec undefined or 0 → no deadline. */
export function withDeadline(p: Promise<void>, timeoutSec: number | undefined): Promise<'done' | 'timeout'> {
  if (!timeoutSec || timeoutSec <= 0) return p.then(() => 'done');
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), timeoutSec * 1000);
  });
  return Promise.race([p.then(() => 'done' as const), t]).finally(() => clearTimeout(timer));
}

/** Polls every 200 ms until every port listens routably, or the process ends. */
export function portsOpen(
  proc: ManagedProcess,
  ports: number[],
  procRoot: string,
  pollMs = 200,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const open = routableListeningPorts(procRoot);
      return ports.every((p) => open.has(p));
    };
    if (check()) return resolve();
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer);
        resolve();
      } else if (!proc.running) {
        clearInterval(timer);
        reject(unprocessable(`process exited before ports ${ports.join(', ')} were listening`));
      }
    }, pollMs);
  });
}

/**
 * The wait of an exec: ports first (when asked), then completion (when asked), under one
 * deadline. Throws the reference's 422 messages on expiry.
 */
export async function waitFor(
  proc: ManagedProcess,
  opts: { waitForCompletion: boolean; waitForPorts: number[]; timeout: number | undefined; procRoot: string },
): Promise<void> {
  const started = Date.now();
  if (opts.waitForPorts.length > 0) {
    const r = await withDeadline(portsOpen(proc, opts.waitForPorts, opts.procRoot), opts.timeout);
    if (r === 'timeout')
      throw unprocessable(`process timed out after ${opts.timeout} seconds waiting for ports`);
  }
  if (opts.waitForCompletion) {
    const left = opts.timeout ? Math.max(0.001, opts.timeout - (Date.now() - started) / 1000) : undefined;
    const r = await withDeadline(proc.exited(), left);
    if (r === 'timeout') throw unprocessable(`process timed out after ${opts.timeout} seconds`);
  }
}
