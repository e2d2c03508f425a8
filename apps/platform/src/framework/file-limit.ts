/**
 * Raises the process's soft RLIMIT_NOFILE to its hard limit at start (issue 19 item 7). Node has
 * no setrlimit, so main.ts runs util-linux's `prlimit --pid <own pid>` (util-linux is Essential
 * on Debian; the launcher need not remember `ulimit -n`). A host where it fails keeps the soft
 * limit, says so, and the connection caps follow whatever limit is in force (connection-budget.ts).
 */
export interface FileLimit {
  soft: number;
  hard: number;
}

/** What is assumed when the limit cannot be read: the usual default soft limit. */
const UNKNOWN_LIMIT: FileLimit = { soft: 1024, hard: 1024 };

export type RunCommand = (command: string, args: string[]) => Promise<string>;

/** `Max open files` of /proc/<pid>/limits ("unlimited" reads as Infinity). */
export function parseProcLimits(text: string): FileLimit | undefined {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m) return undefined;
  const n = (v: string) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v));
  return { soft: n(m[1]!), hard: n(m[2]!) };
}

/**
 * Sets soft = hard when they differ. Returns the limit in force afterwards, read back from
 * /proc (never what we asked for), and why it could not be raised if it was not.
 */
export async function raiseFileLimit(
  pid: number,
  run: RunCommand,
  readLimits: () => Promise<string>,
): Promise<FileLimit & { error?: string }> {
  let before: FileLimit | undefined;
  try {
    before = parseProcLimits(await readLimits());
  } catch (err) {
    // No /proc (not Linux): assume the common default and say so; the caps follow it.
    return { ...UNKNOWN_LIMIT, error: err instanceof Error ? err.message : String(err) };
  }
  if (!before) return { ...UNKNOWN_LIMIT, error: 'no "Max open files" line in /proc limits' };
  if (before.soft >= before.hard) return before;
  // An infinite hard limit for NOFILE is not something Linux grants; keep to a finite value.
  const target = Number.isFinite(before.hard) ? String(before.hard) : 'unlimited';
  let error: string | undefined;
  try {
    await run('prlimit', ['--pid', String(pid), `--nofile=${target}:${target}`]);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const after = parseProcLimits(await readLimits()) ?? before;
  return { ...after, ...(error ? { error } : {}) };
}
