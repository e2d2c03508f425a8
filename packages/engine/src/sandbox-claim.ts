// The warm pool's claim of a booted sandbox (LocalEngine.claim, issue 20): its new hostname, boot
// env and labels.
import { bootEnvFile, claimedBootEnv, readBootEnv, writeBootEnv } from './boot-env.js';
import { EngineError } from './errors.js';
import type { SandboxHost } from './sandbox-host.js';

/**
 * The warm pool's claim (issue 20): a sandbox booted ahead of demand takes the hostname and
 * labels of the sandbox it becomes. The hostname is set in the container's UTS namespace from
 * the host (`nsenter --uts`): the sandbox holds no CAP_SYS_ADMIN to do it itself, and `uname -n`
 * inside must read what a sandbox booted with that hostname reads. The labels are what the
 * platform's orphan reaper and workspace deletion go by.
 * The hostname goes through the prepared setter, else (none, or it failed) a plain `nsenter`.
 */
export async function claimSandbox(
  host: SandboxHost,
  id: string,
  o: { hostname: string; labels: Record<string, string>; env: Record<string, string> },
): Promise<void> {
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(o.hostname)) {
    throw new EngineError(`invalid hostname "${o.hostname}"`);
  }
  const rec = host.files.read(id);
  // The prepared setter gets the name first (hostname-setters.ts): the file work below runs while
  // that shell wakes up and writes it, not before (issue 20 item 1: ~1 ms of a loaded host's claim).
  const setting = host.hostnames.set(id, o.hostname).catch(() => false);
  const pid = host.runc.alive(id)?.pid;
  if (pid === undefined) throw new EngineError(`sandbox ${id} is not running`);
  // Before the first await: the file is the claimed one by the time this call returns.
  const boot = bootEnvFile(host.bundles.find(id, host.files.layout(id)).bootDir);
  writeBootEnv(boot, claimedBootEnv(readBootEnv(boot), o.hostname, o.env), host.idRange);
  // Synchronously: a write and a rename take ~0.16 ms here, where the same through libuv's pool
  // (four round trips to a busy event loop) took ~2.3 ms longer than the hostname (issue 20 item 1).
  host.files.write({ ...rec, labels: o.labels });
  if (await setting) return;
  // No prepared setter, or it failed: the plain way (a new nsenter, ~5 ms).
  const args = [`--target=${pid}`, '--uts', '--', 'hostname', o.hostname];
  await host.runner.run('nsenter', args, { timeoutMs: 5000 });
}

/**
 * Readies `claim`'s hostname change (hostname-setters.ts): the pool calls it once the sandbox is
 * booted and warmed, and gives it the labels saying so (`labels`, replacing the boot's), so that
 * whoever reads the engine's records can tell a ready member from one still booting.
 */
export function prepareClaim(host: SandboxHost, id: string, labels?: Record<string, string>): void {
  const pid = host.runc.alive(id)?.pid;
  if (pid !== undefined) host.hostnames.prepare(id, pid);
  if (labels) host.files.write({ ...host.files.read(id), labels });
}
