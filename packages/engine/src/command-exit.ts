// A command container's exit code (SandboxSpec.command, job tasks). `runc run --detach` leaves the
// container's init to the host's reaper, so nobody the engine can ask sees its exit status. The
// runtime's busybox (shipped with sandboxd, runtime-dir.ts) therefore runs the command and writes
// its status as the log's last line; inspect() reads it back. A program may print the same line
// itself: it only decides its own task's outcome, which its exit code does anyway.
import { IN_SANDBOX, type RuntimeDir } from './runtime-dir.js';

export const EXIT_MARKER = 'tarmac-exit-code:';

const WRAPPER = `"$@"; c=$?; echo "${EXIT_MARKER}$c" >&2; exit $c`;

/** tini (signals to the whole group) → busybox sh wrapper → the command. */
export function commandContainerArgs(runtime: Pick<RuntimeDir, 'supervised'>, command: string[]): string[] {
  const tini = [IN_SANDBOX.tini, '-g', '--'];
  // Without busybox the command still runs; its exit code is then unknown (null).
  if (!runtime.supervised) return [...tini, ...command];
  return [...tini, IN_SANDBOX.busybox, 'sh', '-c', WRAPPER, 'tarmac-task', ...command];
}

/** The exit code the wrapper wrote last in a log tail, or null. */
export function exitCodeFromLog(tail: string): number | null {
  const at = tail.lastIndexOf(EXIT_MARKER);
  if (at < 0) return null;
  const m = /^(\d{1,3})\s*$/.exec(tail.slice(at + EXIT_MARKER.length));
  return m ? Number(m[1]) : null;
}
