// What LocalEngine reports of the sandboxes on disk (local-engine.ts): status is derived from
// the files, runc's state and the cgroups every time, never cached (ARCHITECTURE.md "Lifecycle"),
// so an engine re-attaching after a crash lists the same sandboxes.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { exitCodeFromLog } from './command-exit.js';
import type { SandboxInfo } from './engine.js';
import { SandboxNotFoundError } from './errors.js';
import type { SandboxRecord } from './sandbox-files.js';
import type { SandboxHost } from './sandbox-host.js';
import { describeSandbox } from './sandbox-status.js';

export function sandboxInfo(host: SandboxHost, rec: SandboxRecord): SandboxInfo {
  const live = host.runc.alive(rec.id);
  let stop = host.files.readStop(rec.id);
  // A command container that ended by itself: its wrapper wrote the exit code last in its log.
  if (!live && !stop && rec.command) {
    const code = exitCodeFromLog(logTail(host, rec.id, 256));
    if (code !== null) stop = { reason: 'exited', exitCode: code, oomKilled: false };
  }
  return describeSandbox(rec, {
    pid: live?.pid ?? null,
    frozen: live !== null && host.cgroups.isFrozen(rec.cgroup),
    oomKills: host.cgroups.oomKills(rec.cgroup),
    stop,
  });
}

export function listSandboxes(host: SandboxHost): SandboxInfo[] {
  const out: SandboxInfo[] = [];
  for (const id of host.files.ids()) {
    try {
      out.push(sandboxInfo(host, host.files.read(id)));
    } catch (err) {
      if (!(err instanceof SandboxNotFoundError)) throw err; // deleted meanwhile
    }
  }
  return out;
}

/** Memory limits of sandboxes whose init is alive (stopped ones hold no memory). */
export function liveMemory(host: SandboxHost): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of host.files.ids()) {
    try {
      const rec = host.files.read(id);
      if (host.runc.alive(id)) out.set(id, rec.memoryMB);
    } catch (err) {
      if (!(err instanceof SandboxNotFoundError)) throw err;
    }
  }
  return out;
}

export function readSandboxLog(
  host: SandboxHost,
  id: string,
  offset: number,
  maxBytes: number,
): { text: string; next: number } {
  const path = host.files.layout(id).log;
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return { text: '', next: offset };
  }
  const start = Math.max(offset, size - maxBytes, 0);
  const length = Math.max(0, size - start);
  if (length === 0) return { text: '', next: size };
  const buf = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, length, start);
  } finally {
    closeSync(fd);
  }
  return { text: buf.toString('utf8'), next: size };
}

export function logTail(host: SandboxHost, id: string, bytes = 600): string {
  try {
    const text = readFileSync(host.files.layout(id).log, 'utf8');
    return text.slice(-bytes).trim() || '(no output)';
  } catch {
    return '(no log)';
  }
}
