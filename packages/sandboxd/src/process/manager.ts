// The process table (reference sandbox-api.md §1.3): spawn through the shell in a new process
// group, names, restarts, stop/kill markers, keep-alive accounting. HTTP-free: routes.ts and the
// MCP tools drive it. The spawner and clock are injected.
import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ProcessRequest, ProcessResponse, ProcessStatus } from '@tarmac/contract';
import type { Clock } from '../config.js';
import { badRequest, notFound, unprocessable } from '../http/errors.js';
import { INLINE_LOG_BYTES, ProcessLogs, type StreamName } from './logs.js';

export type Spawner = typeof nodeSpawn;

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
}

/** Emits 'output' (stream, chunk) and, once the process is final (no more restarts), 'exit'. */
export class ManagedProcess extends EventEmitter {
  status: ProcessStatus = 'running';
  exitCode = 0;
  completedAt: Date | undefined;
  restartCount = 0;
  child: ChildProcess | undefined;
  ending: 'stopped' | 'killed' | undefined;
  lifeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly pid: string,
    readonly req: Required<Pick<ProcessRequest, 'command' | 'name'>> & ProcessRequest,
    readonly workingDir: string,
    readonly startedAt: Date,
    readonly logs: ProcessLogs,
  ) {
    super();
    this.setMaxListeners(0);
  }

  get running(): boolean {
    return this.status === 'running';
  }

  /** Resolves when final; immediately if already done. */
  exited(): Promise<void> {
    return this.running ? new Promise((r) => this.once('exit', () => r())) : Promise.resolve();
  }

  /** The ProcessResponse; `list` renders an unfinished completedAt as null, exec/get as "" (§1.3). */
  toResponse(forList = false): ProcessResponse {
    return {
      pid: this.pid,
      name: this.req.name,
      command: this.req.command,
      workingDir: this.workingDir,
      status: this.status,
      startedAt: this.startedAt.toUTCString(),
      completedAt: this.completedAt ? this.completedAt.toUTCString() : forList ? null : '',
      exitCode: this.exitCode,
      logs: this.logs.tail('combined', INLINE_LOG_BYTES),
      stdout: this.logs.tail('stdout', INLINE_LOG_BYTES),
      stderr: this.logs.tail('stderr', INLINE_LOG_BYTES),
      restartOnFailure: this.req.restartOnFailure ?? false,
      maxRestarts: this.req.maxRestarts ?? 0,
      restartCount: this.restartCount,
      keepAlive: this.req.keepAlive ?? false,
    };
  }
}

export class ProcessManager {
  private readonly procs: ManagedProcess[] = [];
  private readonly spawn: Spawner;

  constructor(private readonly o: ManagerOptions) {
    this.spawn = o.spawn ?? nodeSpawn;
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

  /** Starts a process; validation failures are 400, a failed spawn is 422 (thrown by spawnChild). */
  start(req: ProcessRequest, workingDir: string): ManagedProcess {
    if (req.keepAlive && this.o.keepAliveDisabled) {
      throw badRequest(
        'keepAlive is not available for this sandbox: it is not included in your current plan',
      );
    }
    const name = req.name ?? randomBytes(6).toString('base64url').slice(0, 8).toLowerCase();
    if (this.procs.some((p) => p.running && p.req.name === name)) {
      throw badRequest(`process with name '${name}' already exists and is running`);
    }
    const child = this.spawnChild(req, workingDir);
    const pid = String(child.pid);
    const proc = new ManagedProcess(
      pid,
      { ...req, name },
      workingDir,
      this.o.clock.now(),
      new ProcessLogs(this.o.logDir, `${name.replace(/[^\w.-]/g, '_')}-${pid}`, this.o.logFileMaxBytes),
    );
    this.procs.push(proc);
    this.attach(proc, child);
    // keepAlive processes die at their timeout (600 s default, 0 = never; §1.3 "timeout").
    const life = keepAliveTimeout(req);
    if (life !== undefined && life > 0) {
      proc.lifeTimer = setTimeout(() => this.signal(proc, 'SIGKILL', 'killed'), life * 1000);
      proc.lifeTimer.unref();
    }
    return proc;
  }

  /** DELETE /process/{id}: SIGTERM to the group; 404 on any failure, "not running" included. */
  stop(identifier: string): void {
    const p = this.get(identifier);
    if (!p.running) throw notFound(`process ${identifier} is not running`);
    p.logs.write('stdout', '\n[Process is being gracefully terminated]\n');
    this.signal(p, 'SIGTERM', 'stopped');
  }

  /** DELETE /process/{id}/kill: SIGKILL to the group. */
  kill(identifier: string): void {
    const p = this.get(identifier);
    if (!p.running) throw notFound(`process ${identifier} is not running`);
    p.logs.write('stdout', '\n[Process is being forcefully killed]\n');
    this.signal(p, 'SIGKILL', 'killed');
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
    const pid = p.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // The group is gone (e.g. between a failure and its restart): the restart timer sees
      // `ending` and finishes the process instead of restarting it.
    }
  }

  private spawnChild(req: ProcessRequest, cwd: string): ChildProcess {
    const child = this.spawn(this.o.shell, [...this.o.shellArgs, req.command], {
      cwd,
      env: { ...this.o.env, ...req.env },
      detached: true, // setsid: its own process group, so stop/kill reach all children
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) {
      child.on('error', () => undefined);
      throw unprocessable(`failed to start process: ${req.command}`);
    }
    return child;
  }

  private attach(p: ManagedProcess, child: ChildProcess): void {
    p.child = child;
    const out = (stream: StreamName) => (chunk: Buffer) => {
      p.logs.write(stream, chunk);
      p.emit('output', stream, chunk);
    };
    child.stdout?.on('data', out('stdout'));
    child.stderr?.on('data', out('stderr'));
    child.on('error', () => undefined);
    child.on('close', (code, signal) => this.onClose(p, code, signal));
  }

  private onClose(p: ManagedProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const exitCode = code ?? (signal ? 128 + signalNumber(signal) : 1);
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
      setTimeout(() => {
        if (p.ending) return this.finish(p, p.ending);
        try {
          this.attach(p, this.spawnChild(p.req, p.workingDir));
        } catch {
          this.finish(p, 'failed');
        }
      }, this.o.restartDelayMs ?? 1000);
      return;
    }
    this.finish(p, p.ending ?? (exitCode === 0 ? 'completed' : 'failed'));
  }

  private finish(p: ManagedProcess, status: ProcessStatus): void {
    p.status = status;
    p.completedAt = this.o.clock.now();
    if (p.lifeTimer) clearTimeout(p.lifeTimer);
    p.logs.close();
    p.emit('exit');
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
