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
  const setting = host.hostnames.set(id, o.hostname);
  const pid = host.runc.alive(id)?.pid;
  if (pid === undefined) {
    await setting.catch(() => undefined);
    throw new EngineError(`sandbox ${id} is not running`);
  }
  // Before the first await: the file is the claimed one by the time this call returns.
  const boot = bootEnvFile(host.bundles.find(id, host.files.layout(id)).bootDir);
  writeBootEnv(boot, claimedBootEnv(readBootEnv(boot), o.hostname, o.env), host.idRange);
  // The labels only matter to the platform's own bookkeeping: written while the setter works.
  const [set] = await Promise.all([setting, host.files.writeAsync({ ...rec, labels: o.labels })]);
  if (!set) {
    const args = [`--target=${pid}`, '--uts', '--', 'hostname', o.hostname];
    await host.runner.run('nsenter', args, { timeoutMs: 5000 });
  }
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
