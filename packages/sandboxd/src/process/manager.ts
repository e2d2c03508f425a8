// The process table (reference sandbox-api.md §1.3): spawn through the shell in a new process
// group, names, restarts, stop/kill markers, keep-alive accounting. HTTP-free: routes.ts and the
// MCP tools drive it. The spawner and clock are injected.
//
// With a state directory (issue 19 item 6) the table outlives sandboxd: every change is written
// to disk (records.ts), output goes through FIFOs the child keeps open (fifos.ts), and restore()
// re-adopts the processes a previous sandboxd started that are still alive.
import { spawn as nodeSpawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ProcessRequest, ProcessResponse, ProcessStatus } from '@tarmac/contract';
import type { Clock } from '../config.js';
import { badRequest, HttpError, notFound } from '../http/errors.js';
import {
  spawnShell,
  watchProcess,
  type Exit,
  type ShellOptions,
  type Spawned,
  type Spawner,
} from './child.js';
import { FifoPool, openFifoReader } from './fifos.js';
import { ProcessLogs } from './logs.js';
import { ManagedProcess, UNKNOWN_EXIT_CODE } from './managed.js';
import { KEPT_FINISHED_RECORDS, ProcessRecords, startTicks, stillRunning } from './records.js';
import { writeDrained } from './stdin.js';
import { waitFor } from './wait.js';

export { ManagedProcess, UNKNOWN_EXIT_CODE } from './managed.js';
export type { Spawner } from './child.js';

export interface ManagerOptions {
  shell: string;
  shellArgs: string[];
  env: Record<string, string>;
  logDir: string;
  logFileMaxBytes: number;
  keepAliveDisabled: boolean;
  clock: Clock;
  spawn?: Spawner;
  /** Delay before a restart; 1 s upstream. */
  restartDelayMs?: number;
  /** Where the table and the FIFOs live (a tmpfs private to the sandbox); none: in memory only. */
  stateDir?: string;
  /** The command that makes FIFOs (`mkfifo`, or the runtime's `busybox mkfifo`). */
  mkfifo?: readonly string[];
  /** To tell whether an adopted process still runs. */
  procRoot?: string;
  /** Finished processes kept (listed, their logs readable); older ones are forgotten. */
  keepFinished?: number;
}

export class ProcessManager {
  private readonly procs: ManagedProcess[] = [];
  /**
   * The finished ones among `procs`, oldest first. Only the newest `keepFinished` stay — in the
   * table, on disk (records.ts keeps as many) and as log files: an agent that runs a command a
   * second for days would otherwise grow sandboxd's memory (its sandbox's) and fill its /tmp
   * with log files, one process at a time, without bound.
   */
  private readonly finished: ManagedProcess[] = [];
  private readonly keepFinished: number;
  private readonly shellOptions: ShellOptions;
  private readonly records: ProcessRecords | undefined;
  private readonly fifos: FifoPool | undefined;
  private readonly procRoot: string;

  constructor(private readonly o: ManagerOptions) {
    this.shellOptions = { spawn: o.spawn ?? nodeSpawn, shell: o.shell, shellArgs: o.shellArgs, env: o.env };
    this.procRoot = o.procRoot ?? '/proc';
    this.keepFinished = o.keepFinished ?? KEPT_FINISHED_RECORDS;
    if (o.stateDir) {
      this.records = new ProcessRecords(`${o.stateDir}/processes`, this.keepFinished);
      if (o.mkfifo?.length) this.fifos = new FifoPool(`${o.stateDir}/fifos`, o.mkfifo);
    }
  }

  /** Makes the first FIFOs in the background (called once the daemon listens). */
  prepare(): void {
    void this.fifos?.prefill();
  }

  /**
   * Readies the first exec now (a warm-pool sandboxd before it is frozen, issue 20): its FIFOs
   * exist, and one process has gone the whole way a user's does (spawn, FIFOs, logs, record,
   * wait, exit, answer), so that code is compiled and the shell's pages mapped. Then it is
   * forgotten — table, record and log files —: nobody's process, never shown to the sandbox's
   * user. Resolves with what `POST /process` would have answered for it.
   */
  async warm(workingDir: string): Promise<ProcessResponse> {
    await this.fifos?.prefill();
    const p = await this.start(
      { command: 'true', name: `tarmac-warm-${randomBytes(4).toString('hex')}` },
      workingDir,
    );
    await waitFor(p, {
      waitForCompletion: true,
      waitForPorts: [],
      timeout: undefined,
      procRoot: this.procRoot,
    });
    const answer = p.toResponse();
    this.forget(p);
    this.records?.remove(p.pid);
    return answer;
  }

  list(): ManagedProcess[] {
    return [...this.procs];
  }

  /** All digits → PID; else the most recently started process with that name (§1.3 "Names"). */
  find(identifier: string): ManagedProcess | undefined {
    if (/^\d+$/.test(identifier)) return this.procs.find((p) => p.pid === identifier);
    for (let i = this.procs.length - 1; i >= 0; i--)
      if (this.procs[i]?.req.name === identifier) return this.procs[i];
    return undefined;
  }

  get(identifier: string): ManagedProcess {
    const p = this.find(identifier);
    if (!p) throw notFound(`process not found: ${identifier}`);
    return p;
  }

  /** Running keep-alive processes: while > 0 the sandbox must not go to standby (§1.3, §4). */
  keepAliveCount(): number {
    return this.procs.filter((p) => p.running && p.req.keepAlive).length;
  }

  /** Starts a process; validation failures are 400, a failed spawn is 422 (thrown by spawnWith). */
  async start(req: ProcessRequest, workingDir: string): Promise<ManagedProcess> {
    if (req.keepAlive && this.o.keepAliveDisabled) {
      throw badRequest(
        'keepAlive is not available for this sandbox: it is not included in your current plan',
      );
    }
    const name = req.name ?? randomBytes(6).toString('base64url').slice(0, 8).toLowerCase();
    const fifos = await this.fifos?.take();
    // Checked after the wait, so two concurrent starts of one name cannot both pass.
    if (this.procs.some((p) => p.running && p.req.name === name)) {
      if (fifos) void Promise.all(fifos.map((f) => unlink(f).catch(() => undefined)));
      throw badRequest(`process with name '${name}' already exists and is running`);
    }
    const spawned = spawnShell(this.shellOptions, req, workingDir, fifos);
    const pid = String(spawned.child.pid);
    const proc = new ManagedProcess(
      pid,
      { ...req, name },
      workingDir,
      this.o.clock.now(),
      new ProcessLogs(this.o.logDir, `${name.replace(/[^\w.-]/g, '_')}-${pid}`, this.o.logFileMaxBytes),
    );
    this.procs.push(proc);
    this.attach(proc, spawned);
    // keepAlive processes die at their timeout (600 s default, 0 = never; §1.3 "timeout").
    const life = keepAliveTimeout(req);
    if (life !== undefined && life > 0) proc.lifeDeadline = Date.now() + life * 1000;
    this.armLife(proc);
    this.persist(proc);
    return proc;
  }

  /**
   * Reads back the table a previous sandboxd left (issue 19 item 6): finished processes are
   * listed as they were; running ones still alive (same pid and start time) are adopted: their
   * output is read again from their FIFOs, their logs appended to, stop/kill reach their group,
   * and their end is noticed by polling (not our children: the exit code is unknown, reported
   * as -1). Those that ended while sandboxd was down are final with that unknown code too.
   */
  restore(): void {
    if (!this.records) return;
    const ended: ManagedProcess[] = [];
    for (const r of this.records.loadAll()) {
      if (this.procs.some((p) => p.pid === r.key)) continue;
      const running = r.status === 'running';
      const logs = new ProcessLogs(this.o.logDir, r.logBase, this.o.logFileMaxBytes, true);
      const p = ManagedProcess.fromRecord(r, logs);
      this.procs.push(p);
      if (!running) {
        logs.close();
        ended.push(p);
        continue;
      }
      this.armLife(p);
      const alive = stillRunning(this.procRoot, p.osPid, p.startTicks);
      const readers: Readable[] = [];
      if (alive && p.fifos) {
        try {
          for (const f of p.fifos) readers.push(openFifoReader(f));
        } catch {
          for (const s of readers.splice(0)) s.destroy();
        }
      }
      watchProcess(p, readers, undefined, this.procRoot, (exit) => this.onClose(p, exit));
    }
    this.fifos?.sweep(new Set(this.procs.flatMap((p) => p.fifos ?? [])));
    // Oldest first, as they ended (loadAll kept the newest `keepFinished` of them).
    ended.sort((a, b) => (a.completedAt?.getTime() ?? 0) - (b.completedAt?.getTime() ?? 0));
    this.finished.unshift(...ended);
    this.trimFinished();
  }

  /** DELETE /process/{id}: SIGTERM to the group; 404 on any failure, "not running" included. */
  stop(identifier: string): void {
    const p = this.get(identifier);
    if (!p.running) throw notFound(`process ${identifier} is not running`);
    p.logs.write('stdout', '\n[Process is being gracefully terminated]\n');
    this.signal(p, 'SIGTERM', 'stopped');
    this.persist(p);
  }

  /** DELETE /process/{id}/kill: SIGKILL to the group. */
  kill(identifier: string): void {
    const p = this.get(identifier);
    if (!p.running) throw notFound(`process ${identifier} is not running`);
    p.logs.write('stdout', '\n[Process is being forcefully killed]\n');
    this.signal(p, 'SIGKILL', 'killed');
    this.persist(p);
  }

  /**
   * POST /process/{id}/stdin (issue 14 item 6): the bytes as they are, to a process started with
   * `stdin: true`. 409 without a stdin or once it is closed; 503 when the process does not take
   * the bytes up within LIMITS.stdinDrainMs or its end of the pipe is gone.
   */
  async writeStdin(identifier: string, data: Buffer, drainMs: number): Promise<void> {
    const pipe = this.openStdin(identifier);
    if (data.length === 0) return;
    await writeDrained(pipe, data, drainMs, identifier);
  }

  /** DELETE /process/{id}/stdin: EOF for the process; idempotent. 409 when it has no stdin. */
  closeStdin(identifier: string): void {
    const p = this.get(identifier);
    if (!p.req.stdin)
      throw new HttpError(409, `process ${identifier} has no stdin (start it with stdin: true)`);
    p.stdinPipe?.end();
  }

  private openStdin(identifier: string) {
    const p = this.get(identifier);
    if (!p.req.stdin)
      throw new HttpError(409, `process ${identifier} has no stdin (start it with stdin: true)`);
    const pipe = p.stdinPipe;
    if (!p.running || !pipe || pipe.writableEnded || pipe.destroyed) {
      throw new HttpError(409, `stdin of process ${identifier} is closed`);
    }
    return pipe;
  }

  /** SIGKILLs every running process group (daemon shutdown, tests). */
  killAll(): void {
    for (const p of this.procs) if (p.running) this.signal(p, 'SIGKILL', 'killed');
  }

  /** SIGTERMs every running process group and resolves once all are final (daemon shutdown). */
  async terminateAll(): Promise<void> {
    const running = this.procs.filter((p) => p.running);
    for (const p of running) this.signal(p, 'SIGTERM', 'stopped');
    await Promise.all(running.map((p) => p.exited()));
  }

  private signal(p: ManagedProcess, sig: NodeJS.Signals, ending: 'stopped' | 'killed'): void {
    if (!p.running) return;
    p.ending = ending;
    if (p.osPid <= 0) return;
    try {
      process.kill(-p.osPid, sig);
    } catch {
      // The group is gone (e.g. between a failure and its restart): the restart timer sees
      // `ending` and finishes the process instead of restarting it.
    }
  }

  private persist(p: ManagedProcess): void {
    try {
      this.records?.save(p.toRecord());
    } catch (err) {
      // A full or missing state dir costs only the survival of this entry across a restart.
      console.error(`sandboxd: cannot save process ${p.pid}: ${String(err)}`);
    }
  }

  private armLife(p: ManagedProcess): void {
    if (p.lifeDeadline === undefined || p.lifeTimer) return;
    p.lifeTimer = setTimeout(
      () => this.signal(p, 'SIGKILL', 'killed'),
      Math.max(0, p.lifeDeadline - Date.now()),
    );
    p.lifeTimer.unref();
  }

  private attach(p: ManagedProcess, s: Spawned): void {
    p.osPid = s.child.pid ?? 0;
    p.startTicks = startTicks(this.procRoot, p.osPid);
    p.fifos = s.fifos;
    p.stdinPipe = s.child.stdin ?? undefined;
    // A write after the process stopped reading is an EPIPE here, answered by writeStdin.
    p.stdinPipe?.on('error', () => undefined);
    watchProcess(p, [s.stdout, s.stderr], s.child, this.procRoot, (exit) => this.onClose(p, exit));
  }

  private onClose(p: ManagedProcess, exit: Exit): void {
    const exitCode = exit.unknown
      ? UNKNOWN_EXIT_CODE
      : (exit.code ?? (exit.signal ? 128 + signalNumber(exit.signal) : 1));
    if (exit.unknown && !p.ending)
      p.logs.write('stdout', '\n[Process ended while the sandbox API restarted; its exit code is unknown]\n');
    p.exitCode = exitCode;
    const restarts = p.req.maxRestarts ?? 0;
    if (
      !p.ending &&
      exitCode !== 0 &&
      p.req.restartOnFailure &&
      (restarts < 0 || p.restartCount < restarts)
    ) {
      p.restartCount++;
      const of = restarts < 0 ? 'unlimited' : String(restarts);
      p.logs.write(
        'stdout',
        `\n[Process failed with exit code ${exitCode}. Attempting restart ${p.restartCount}/${of}...]\n`,
      );
      this.persist(p);
      setTimeout(() => void this.respawn(p), this.o.restartDelayMs ?? 1000);
      return;
    }
    this.finish(p, p.ending ?? (exitCode === 0 ? 'completed' : 'failed'));
  }

  private async respawn(p: ManagedProcess): Promise<void> {
    if (p.ending) return this.finish(p, p.ending);
    const fifos = await this.fifos?.take();
    if (p.ending) return this.finish(p, p.ending);
    try {
      this.attach(p, spawnShell(this.shellOptions, p.req, p.workingDir, fifos));
      this.persist(p);
    } catch {
      this.finish(p, 'failed');
    }
  }

  private finish(p: ManagedProcess, status: ProcessStatus): void {
    p.status = status;
    p.completedAt = this.o.clock.now();
    if (p.lifeTimer) clearTimeout(p.lifeTimer);
    p.logs.close();
    this.persist(p);
    this.finished.push(p);
    p.emit('exit');
    this.trimFinished();
  }

  /** Forgets the oldest finished processes beyond `keepFinished`: table and log files. */
  private trimFinished(): void {
    while (this.finished.length > this.keepFinished) {
      const old = this.finished.shift();
      if (old) this.forget(old);
    }
  }

  /** Out of the table for good, its log files deleted (its record is the caller's, or records.ts's). */
  private forget(p: ManagedProcess): void {
    const i = this.procs.indexOf(p);
    if (i >= 0) this.procs.splice(i, 1);
    const j = this.finished.indexOf(p);
    if (j >= 0) this.finished.splice(j, 1);
    p.logs.remove();
  }
}

/** keepAlive: a missing or negative timeout becomes 600 s, 0 = infinite (§1.3 "timeout"). */
export function keepAliveTimeout(req: ProcessRequest): number | undefined {
  if (!req.keepAlive) return undefined;
  return req.timeout === undefined || req.timeout < 0 ? 600 : req.timeout;
}

function signalNumber(sig: NodeJS.Signals): number {
  const n: Partial<Record<NodeJS.Signals, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGKILL: 9,
    SIGTERM: 15,
    SIGQUIT: 3,
    SIGABRT: 6,
    SIGSEGV: 11,
    SIGPIPE: 13,
  };
  return n[sig] ?? 0;
}
