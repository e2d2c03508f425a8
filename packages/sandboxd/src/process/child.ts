// A process's child plumbing (reference sandbox-api.md §1.3, issue 19 item 6): the shell spawned
// in its own session with its output on FIFOs (or pipes), and the watch that turns output into log
// writes and 'output' events and decides when the process is over.
import { type ChildProcess, type spawn as nodeSpawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ProcessRequest } from '@tarmac/contract';
import { unprocessable } from '../http/errors.js';
import { openFifoReader, openFifoWriters, type FifoPair } from './fifos.js';
import type { StreamName } from './logs.js';
import type { ManagedProcess } from './managed.js';
import { stillRunning } from './records.js';

export type Spawner = typeof nodeSpawn;

export interface ShellOptions {
  spawn: Spawner;
  shell: string;
  shellArgs: string[];
  env: Record<string, string>;
}

/** A spawned child and the streams its output arrives on. */
export interface Spawned {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
  fifos: FifoPair | undefined;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The process was not our child (adopted, or it ended while sandboxd was down). */
  unknown: boolean;
}

/** How often an adopted process (not our child: no exit event) is checked for. */
const ADOPTED_POLL_MS = 500;

/** Spawns through the shell, output on fresh FIFOs when there are any, else on pipes. */
export function spawnShell(
  o: ShellOptions,
  req: ProcessRequest,
  cwd: string,
  fifos: FifoPair | undefined,
): Spawned {
  let writers: [number, number] | undefined;
  let readers: [Readable, Readable] | undefined;
  if (fifos) {
    try {
      writers = openFifoWriters(fifos);
      readers = [openFifoReader(fifos[0]), openFifoReader(fifos[1])];
    } catch {
      for (const fd of writers ?? []) closeQuietly(fd);
      writers = undefined;
      fifos = undefined;
    }
  }
  let child: ChildProcess;
  try {
    child = o.spawn(o.shell, [...o.shellArgs, req.command], {
      cwd,
      env: { ...o.env, ...req.env },
      detached: true, // setsid: its own process group, so stop/kill reach all children
      // stdin: a pipe only when asked for (POST /process/{id}/stdin), else /dev/null.
      stdio: [req.stdin ? 'pipe' : 'ignore', writers?.[0] ?? 'pipe', writers?.[1] ?? 'pipe'],
    });
  } finally {
    // The child has its own copies; ours would keep the FIFOs from ever reaching EOF.
    for (const fd of writers ?? []) closeQuietly(fd);
  }
  if (child.pid === undefined) {
    child.on('error', () => undefined);
    for (const r of readers ?? []) r.destroy();
    for (const f of fifos ?? []) void unlink(f).catch(() => undefined);
    throw unprocessable(`failed to start process: ${req.command}`);
  }
  const stdout = readers?.[0] ?? child.stdout;
  const stderr = readers?.[1] ?? child.stderr;
  if (!stdout || !stderr) throw unprocessable(`failed to start process: ${req.command}`);
  return { child, stdout, stderr, fifos };
}

/**
 * Output to the logs and 'output' listeners; the process is over once its exit is known and
 * every output stream has ended (as node's 'close'). Without a child (adopted), its exit is
 * noticed by polling /proc.
 */
export function watchProcess(
  p: ManagedProcess,
  streams: Readable[],
  child: ChildProcess | undefined,
  procRoot: string,
  onEnd: (exit: Exit) => void,
): void {
  let open = streams.length;
  let exit: Exit | undefined;
  const poll = child ? undefined : setInterval(() => check(), ADOPTED_POLL_MS);
  poll?.unref();
  const done = (): void => {
    if (open > 0 || !exit) return;
    if (poll) clearInterval(poll);
    const fifos = p.fifos;
    p.fifos = undefined;
    for (const f of fifos ?? []) void unlink(f).catch(() => undefined);
    onEnd(exit);
  };
  const check = (): void => {
    if (exit || stillRunning(procRoot, p.osPid, p.startTicks)) return;
    exit = { code: null, signal: null, unknown: true };
    done();
  };
  streams.forEach((stream, i) => {
    const name: StreamName = i === 0 ? 'stdout' : 'stderr';
    stream.on('data', (chunk: Buffer) => {
      p.logs.write(name, chunk);
      p.emit('output', name, chunk);
    });
    stream.on('error', () => undefined);
    stream.once('close', () => {
      open--;
      if (!child) check();
      done();
    });
  });
  if (child) {
    child.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      exit = { code, signal, unknown: false };
      done();
    });
    return;
  }
  check();
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}
