// One entry of the process table (reference sandbox-api.md §1.3): what the API reports, plus what
// a restarted sandboxd needs to find the process again (records.ts).
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import type { ProcessRequest, ProcessResponse, ProcessStatus } from '@tarmac/contract';
import type { FifoPair } from './fifos.js';
import { INLINE_LOG_BYTES, type ProcessLogs } from './logs.js';
import type { ProcessRecord } from './records.js';

/** Reported for a process whose end sandboxd did not see (it was down, or adopted it). */
export const UNKNOWN_EXIT_CODE = -1;

/** Emits 'output' (stream, chunk) and, once the process is final (no more restarts), 'exit'. */
export class ManagedProcess extends EventEmitter {
  status: ProcessStatus = 'running';
  exitCode = 0;
  completedAt: Date | undefined;
  restartCount = 0;
  ending: 'stopped' | 'killed' | undefined;
  lifeTimer: NodeJS.Timeout | undefined;
  lifeDeadline: number | undefined;
  /** The current child: its pid is its process group (setsid), the target of stop/kill. */
  osPid = 0;
  startTicks: string | undefined;
  fifos: FifoPair | undefined;
  /** The current child's stdin pipe (`stdin: true`); not kept across a sandboxd restart (EOF). */
  stdinPipe: Writable | undefined;

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
      ...(this.req.stdin ? { stdin: true } : {}),
    };
  }

  toRecord(): ProcessRecord {
    return {
      key: this.pid,
      req: this.req,
      workingDir: this.workingDir,
      startedAt: this.startedAt.toISOString(),
      osPid: this.osPid,
      startTicks: this.startTicks,
      logBase: this.logs.base,
      fifos: this.fifos,
      status: this.status,
      exitCode: this.exitCode,
      completedAt: this.completedAt?.toISOString(),
      restartCount: this.restartCount,
      ending: this.ending,
      lifeDeadline: this.lifeDeadline,
    };
  }

  /** Back from a record (a restarted sandboxd). */
  static fromRecord(r: ProcessRecord, logs: ProcessLogs): ManagedProcess {
    const p = new ManagedProcess(r.key, r.req, r.workingDir, new Date(r.startedAt), logs);
    p.status = r.status;
    p.exitCode = r.exitCode;
    p.completedAt = r.completedAt ? new Date(r.completedAt) : undefined;
    p.restartCount = r.restartCount;
    p.ending = r.ending;
    p.lifeDeadline = r.lifeDeadline;
    p.osPid = r.osPid;
    p.startTicks = r.startTicks;
    p.fifos = r.fifos;
    return p;
  }
}
