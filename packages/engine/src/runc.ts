// Thin client over the runc CLI plus direct reads of runc's state.json, so status checks cost
// no process spawn. Containers are started detached (`run --detach`) in their own session with
// stdio on log files: they are children of no platform process and outlive it.
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CommandError, EngineUnavailableError, isMissingPath } from './errors.js';
import type { CommandRunner, RunResult } from './runner.js';

export interface RuncState {
  pid: number;
  /** Start time of the init (clock ticks since boot), to tell a live init from a reused pid. */
  start: number;
}

/** Parsed state files kept (one per container seen alive; a delete or a missing file drops it). */
const MAX_CACHED_STATES = 10_000;

interface CachedState {
  ino: number;
  mtimeMs: number;
  size: number;
  state: RuncState;
}

export class Runc {
  /**
   * state.json is runc's whole container config (tens of KB): reading and parsing it cost ~0.45 ms
   * of a warm-pool claim on the 2-core host, profiled (issue 20 item 1), and every capacity or
   * stats pass parses one per sandbox. runc replaces the file whole (a temp file renamed over
   * it), so an unchanged inode, mtime and size mean unchanged contents: a stat is enough.
   */
  private readonly states = new Map<string, CachedState>();

  constructor(
    private readonly runner: CommandRunner,
    /** runc's state dir; on tmpfs (/run) so a host reboot forgets dead containers. */
    readonly root: string,
    private readonly binary = 'runc',
  ) {}

  /**
   * Starts the container. With `netnsPath`, runc runs inside that network namespace and the
   * container, which has no network namespace of its own in its config, stays in it: a netns the
   * host made cannot be joined by a process already in the container's user namespace, which is
   * what runc 1.1's `exec` does for every namespace in the config (oci-spec.ts).
   */
  async run(id: string, bundle: string, logFile: string, netnsPath?: string): Promise<void> {
    const fd = openSync(logFile, 'a');
    try {
      const res = await this.runner.run(
        ...this.inNetns(netnsPath, ['--root', this.root, 'run', '--detach', '--bundle', bundle, id]),
        { stdoutFd: fd, stderrFd: fd, detached: true, allowFail: true },
      );
      if (res.code !== 0) {
        const tail = readFileSync(logFile, 'utf8').slice(-2000);
        throw new CommandError(`runc run ${id}`, res.code, tail);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Signals every process of the container (runc freezes, signals, thaws on v1). */
  async killAll(id: string, signal: 'TERM' | 'KILL'): Promise<void> {
    await this.runner.run(this.binary, ['--root', this.root, 'kill', '--all', id, signal], {
      allowFail: true,
    });
  }

  /** Changes the cgroup limits of a live container in place (`runc update`). */
  async update(
    id: string,
    limits: { memoryBytes: number; cpuQuota: number; cpuPeriod: number },
  ): Promise<void> {
    const res = await this.runner.run(
      this.binary,
      [
        '--root',
        this.root,
        'update',
        '--memory',
        String(limits.memoryBytes),
        '--cpu-quota',
        String(limits.cpuQuota),
        '--cpu-period',
        String(limits.cpuPeriod),
        id,
      ],
      { allowFail: true },
    );
    if (res.code !== 0) throw new CommandError(`runc update ${id}`, res.code, res.stderr || res.stdout);
  }

  async delete(id: string): Promise<void> {
    this.states.delete(id);
    await this.runner.run(this.binary, ['--root', this.root, 'delete', '--force', id], { allowFail: true });
  }

  /** Runs a command in the container; `netnsPath`: its network namespace (see run()). */
  exec(
    id: string,
    args: string[],
    opts: { timeoutMs?: number; input?: string; envArgs?: string[]; netnsPath?: string } = {},
  ): Promise<RunResult> {
    const { envArgs = [], netnsPath, ...run } = opts;
    return this.runner.run(
      ...this.inNetns(netnsPath, ['--root', this.root, 'exec', ...envArgs, id, ...args]),
      {
        allowFail: true,
        ...run,
      },
    );
  }

  private inNetns(netnsPath: string | undefined, args: string[]): [string, string[]] {
    if (netnsPath === undefined) return [this.binary, args];
    return ['nsenter', [`--net=${netnsPath}`, '--', this.binary, ...args]];
  }

  /**
   * runc's record of the container, or null if runc does not know it (no state.json). Any other
   * failure (EMFILE, EIO, a torn file) throws EngineUnavailableError: unknown is not gone.
   */
  state(id: string): RuncState | null {
    const path = join(this.root, id, 'state.json');
    let text: string;
    let stat: { ino: number; mtimeMs: number; size: number };
    try {
      stat = statSync(path);
      const cached = this.states.get(id);
      if (cached && cached.ino === stat.ino && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size)
        return cached.state;
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if (isMissingPath(err)) {
        this.states.delete(id);
        return null;
      }
      throw new EngineUnavailableError(`runc state of ${id}`, err);
    }
    let state: RuncState;
    try {
      const s = JSON.parse(text) as { init_process_pid: number; init_process_start: number };
      state = { pid: s.init_process_pid, start: s.init_process_start };
    } catch (err) {
      throw new EngineUnavailableError(`runc state of ${id}`, err);
    }
    // The stat taken before the read: a file replaced in between is parsed again next time.
    if (this.states.size >= MAX_CACHED_STATES) this.states.clear();
    this.states.set(id, { ino: stat.ino, mtimeMs: stat.mtimeMs, size: stat.size, state });
    return state;
  }

  /** True while the container's init is alive (not a zombie, not a recycled pid). */
  alive(id: string): RuncState | null {
    const s = this.state(id);
    if (!s || s.pid <= 0) return null;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${s.pid}/stat`, 'utf8');
    } catch (err) {
      // No such process is "dead"; EMFILE and the like say nothing about it (issue 19 item 7).
      if (isMissingPath(err)) return null;
      throw new EngineUnavailableError(`/proc/${s.pid}/stat`, err);
    }
    // Fields after the parenthesised command: state is field 3, starttime field 22.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null;
    return Number(rest[19]) === s.start ? s : null;
  }
}
