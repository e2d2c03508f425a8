// The process table on disk (issue 19 item 6): one JSON file per process in sandboxd's state
// directory (a tmpfs private to the container: /dev/.tarmac-sandboxd in a sandbox, so it is gone
// with the container and its processes), rewritten atomically on start, restart, stop/kill and
// exit. A restarted sandboxd reads it back and re-adopts the processes still alive.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessRequest, ProcessStatus } from '@tarmac/contract';
import type { FifoPair } from './fifos.js';

export interface ProcessRecord {
  /** The API's PID: the first child's pid, kept across restarts (§1.3). */
  key: string;
  req: ProcessRequest & { name: string };
  workingDir: string;
  startedAt: string;
  /** The current child (its process group), and its start time in clock ticks since boot. */
  osPid: number;
  startTicks: string | undefined;
  /** `<logDir>/<logBase>.{stdout.log,stderr.log,log}`. */
  logBase: string;
  fifos: FifoPair | undefined;
  status: ProcessStatus;
  exitCode: number;
  completedAt: string | undefined;
  restartCount: number;
  ending: 'stopped' | 'killed' | undefined;
  /** keepAlive lifetime end, epoch ms. */
  lifeDeadline: number | undefined;
}

/**
 * Finished processes kept on disk: the newest ones survive a restart, older ones are dropped so
 * that a sandbox running many short commands cannot fill /dev (a 64 MiB tmpfs).
 */
export const KEPT_FINISHED_RECORDS = 1000;

export class ProcessRecords {
  private made = false;
  /** Keys of finished records on disk, oldest first. */
  private readonly finished: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly keepFinished = KEPT_FINISHED_RECORDS,
  ) {}

  save(r: ProcessRecord): void {
    if (!this.made) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.made = true;
    const file = join(this.dir, `${r.key}.json`);
    // Sync and tiny, on a tmpfs: the table on disk never lags the one in memory.
    writeFileSync(`${file}.tmp`, JSON.stringify(r), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    if (r.status !== 'running' && !this.finished.includes(r.key)) this.noteFinished(r.key);
  }

  /** Forgets a record for good (the warm pool's warm-up process, manager.ts `warm`). */
  remove(key: string): void {
    rmSync(join(this.dir, `${key}.json`), { force: true });
    const i = this.finished.indexOf(key);
    if (i >= 0) this.finished.splice(i, 1);
  }

  private noteFinished(key: string): void {
    this.finished.push(key);
    while (this.finished.length > this.keepFinished) {
      const old = this.finished.shift();
      rmSync(join(this.dir, `${old}.json`), { force: true });
    }
  }

  loadAll(): ProcessRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => /^\d+\.json$/.test(n));
    } catch {
      return [];
    }
    const out: ProcessRecord[] = [];
    for (const n of names) {
      try {
        out.push(JSON.parse(readFileSync(join(this.dir, n), 'utf8')) as ProcessRecord);
      } catch {
        // A torn or foreign file: skip it rather than refuse to start.
      }
    }
    out.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || Number(a.key) - Number(b.key));
    const done = out.filter((r) => r.status !== 'running');
    done.sort((a, b) => Date.parse(a.completedAt ?? a.startedAt) - Date.parse(b.completedAt ?? b.startedAt));
    for (const r of done) if (!this.finished.includes(r.key)) this.noteFinished(r.key);
    const kept = new Set(this.finished);
    return out.filter((r) => r.status === 'running' || kept.has(r.key));
  }
}

/** Field 22 of /proc/<pid>/stat (start time), undefined when gone or a zombie. */
export function startTicks(procRoot: string, pid: number): string | undefined {
  try {
    const stat = readFileSync(join(procRoot, String(pid), 'stat'), 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return f[0] === 'Z' || f[0] === 'X' ? undefined : f[19];
  } catch {
    return undefined;
  }
}

/** The same process still runs: same pid and start time (a recycled pid is not it). */
export function stillRunning(procRoot: string, pid: number, ticks: string | undefined): boolean {
  return ticks !== undefined && startTicks(procRoot, pid) === ticks;
}
