import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a platform that died (SIGKILL, crash, power) leaves of its builds, removed at the next
 * start (issue 15: builds survive a restart). buildah runs detached in its own process group (so
 * a cancel can kill the whole group), so it outlives the platform; each RUN step is a runc
 * container in a session of its own, which outlives buildah too — and neither has the platform's
 * wall-clock limit any more. So:
 *  - every buildah process the platform starts is noted as `<runroot>/pids/<pid>`; at start each
 *    noted process group still running buildah on this storage is killed;
 *  - each `buildah build` gets a scratch folder `<runroot>/builds/<random>/`: its steps' runc state
 *    (`--runtime-flag root=…/runc`) and its TMPDIR (`…/tmp`, where buildah makes each step's
 *    bundle), so every container there is a step of a build of this home: all are killed and
 *    deleted at start, and the folders removed. The same is done when one build ends, however it
 *    ended (a cancel kills buildah, not its step).
 * Then buildah's own `rm --all` (Buildah.shutdown) removes the working containers.
 */
export interface BuilderPaths {
  /** buildah's `--root`: what a noted process must name to be killed (pids get reused). */
  root: string;
  runroot: string;
}

export const pidDir = (p: BuilderPaths) => join(p.runroot, 'pids');
/** Each `buildah build` gets a scratch folder here: `runc/` (its steps' runc state) and `tmp/` (its TMPDIR). */
export const scratchRoot = (p: BuilderPaths) => join(p.runroot, 'builds');

export function notePid(p: BuilderPaths, pid: number): void {
  mkdirSync(pidDir(p), { recursive: true });
  writeFileSync(join(pidDir(p), String(pid)), '');
}

export function forgetPid(p: BuilderPaths, pid: number): void {
  rmSync(join(pidDir(p), String(pid)), { force: true });
}

/** Kills what a dead platform's builds left running; returns what it removed, for the log. */
export function reapBuilderOrphans(p: BuilderPaths): string[] {
  const removed: string[] = [];
  if (existsSync(pidDir(p))) {
    for (const name of readdirSync(pidDir(p))) {
      const pid = Number(name);
      if (Number.isInteger(pid) && pid > 1 && runsOurBuildah(pid, p.root)) {
        try {
          process.kill(-pid, 'SIGKILL');
          removed.push(`buildah process group ${pid}`);
        } catch {
          // gone meanwhile
        }
      }
      rmSync(join(pidDir(p), name), { force: true });
    }
  }
  if (!existsSync(scratchRoot(p))) return removed;
  for (const name of readdirSync(scratchRoot(p))) removed.push(...endScratch(join(scratchRoot(p), name)));
  return removed;
}

/**
 * Ends one build's scratch folder: kills and deletes every RUN step container of its runc root
 * (after a cancel or a timeout killed buildah, its step's container would otherwise run on, in a
 * session of its own, with no limit on its time), then removes the folder with buildah's bundles
 * in it — unless something is still mounted below it (then it stays, for the next start).
 */
export function endScratch(scratch: string): string[] {
  const removed = killStepContainers(join(scratch, 'runc'));
  if (!readFileSync('/proc/self/mounts', 'utf8').includes(` ${scratch}/`))
    rmSync(scratch, { recursive: true, force: true });
  return removed;
}

function killStepContainers(root: string): string[] {
  if (!existsSync(root)) return [];
  const runc = (...args: string[]) =>
    spawnSync('runc', ['--root', root, ...args], { encoding: 'utf8', timeout: 30_000 });
  const list = runc('list', '-f', 'json');
  const containers = (JSON.parse(list.status === 0 && list.stdout.trim() ? list.stdout : '[]') ??
    []) as Array<{
    id: string;
    bundle: string;
  }>;
  for (const c of containers) {
    runc('kill', c.id, 'KILL');
    runc('delete', '-f', c.id);
  }
  return containers.map((c) => `build step container ${c.id}`);
}

function runsOurBuildah(pid: number, root: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = argv.indexOf('--root');
    return (argv[0] ?? '').endsWith('buildah') && at >= 0 && argv[at + 1] === root;
  } catch {
    return false;
  }
}
