// The warm pool's claim sets a running sandbox's hostname from the host (issue 20; the sandbox
// holds no CAP_SYS_ADMIN to do it itself). `nsenter --uts hostname` at claim time costs two
// exec()s on the create's path — the largest part of a claim on a busy host. Instead, once the
// pooled sandbox is up, a host shell is started already inside its UTS namespace, waiting on its
// stdin; the claim writes the name, the shell writes it to /proc/sys/kernel/hostname (which
// names the writer's UTS namespace: no exec at all) and exits. Without a prepared setter (or if
// it died), the claim falls back to nsenter.
import { spawn, type ChildProcess } from 'node:child_process';
import { EngineError } from './errors.js';

/**
 * Reads one line, writes it as the hostname of the UTS namespace it runs in, then says `ok` on
 * stdout. Builtins only. The claim waits for the `ok`, not for the exit: the shell's teardown
 * and the SIGCHLD round trip to node are off the create's path (issue 20 item 1).
 */
const SET_HOSTNAME_SCRIPT = 'read -r h && printf %s "$h" > /proc/sys/kernel/hostname && echo ok';

export class HostnameSetters {
  private readonly ready = new Map<string, ChildProcess>();

  constructor(
    private readonly env: Record<string, string | undefined>,
    /** The setter's script (tests give one whose `ok` comes after the shell has exited). */
    private readonly script = SET_HOSTNAME_SCRIPT,
  ) {}

  /** Starts the setter of sandbox `id`, whose init is `pid` on the host. */
  prepare(id: string, pid: number): void {
    this.drop(id);
    const child = spawn('nsenter', [`--target=${pid}`, '--uts', '--', 'sh', '-c', this.script], {
      env: this.env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    child.on('error', () => this.forget(id, child));
    child.once('exit', () => this.forget(id, child));
    child.stdin?.on('error', () => undefined); // a setter that died: set() falls back
    this.ready.set(id, child);
  }

  /** Sets the hostname through the prepared setter; false when there is none (use nsenter). */
  async set(id: string, hostname: string, timeoutMs = 5000): Promise<boolean> {
    const child = this.ready.get(id);
    if (!child || child.exitCode !== null || child.pid === undefined) return false;
    this.ready.delete(id);
    const done = await new Promise<true | number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, timeoutMs);
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.startsWith('ok\n')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      // Gone without its `ok`: the write failed (or it was killed). 'close', not 'exit': node can
      // see the exit before it has read the last of the shell's stdout (the `ok` itself) when
      // both arrive in one turn of a busy event loop; the claim then failed with "exit 0".
      child.once('close', (c) => {
        clearTimeout(timer);
        resolve(c === 0 && out.startsWith('ok\n') ? true : (c ?? null));
      });
      child.stdin?.end(`${hostname}\n`);
    });
    if (done !== true) throw new EngineError(`setting the hostname of ${id} failed (exit ${String(done)})`);
    return true;
  }

  /** The sandbox is going: its setter too. */
  drop(id: string): void {
    const child = this.ready.get(id);
    if (!child) return;
    this.ready.delete(id);
    child.kill('SIGKILL');
  }

  private forget(id: string, child: ChildProcess): void {
    if (this.ready.get(id) === child) this.ready.delete(id);
  }
}
