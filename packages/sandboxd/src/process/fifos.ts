// Output channels that outlive sandboxd (issue 19 item 6). A process started with node's pipes
// writes into a socket whose only reader is sandboxd: when sandboxd dies, the next write raises
// SIGPIPE and the process dies with it. Instead each process gets two named pipes (FIFOs) in
// sandboxd's state directory, opened read-write for the child's stdout/stderr, so the child itself
// always holds a reader: while sandboxd is down its writes only block once the pipe buffer
// (64 KiB) is full, and the restarted sandboxd opens the FIFOs again and drains them. EOF comes
// when the process and everything that inherited its stdout have exited, as with pipes.
//
// Node cannot make FIFOs; `mkfifo` (the runtime's static busybox in a sandbox) makes them in
// batches, ahead of need, so an exec rarely waits for it. Without it, processes get plain pipes.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type FifoPair = [stdout: string, stderr: string];

export class FifoPool {
  private readonly spare: string[] = [];
  private filling: Promise<void> | undefined;
  private seq = 0;
  private disabled = false;
  // A fresh prefix per daemon instance: FIFOs of the previous instance may still be in use.
  private readonly prefix = randomBytes(4).toString('hex');

  constructor(
    readonly dir: string,
    private readonly mkfifo: readonly string[],
    private readonly batch = 16,
  ) {}

  /** Two fresh FIFOs, or undefined when they cannot be made (the caller falls back to pipes). */
  async take(): Promise<FifoPair | undefined> {
    if (this.spare.length < 2 && !this.disabled) await this.fill();
    if (this.spare.length < 2) return undefined;
    const [out, err] = this.spare.splice(0, 2) as FifoPair;
    if (this.spare.length < this.batch && !this.disabled) void this.fill();
    return [out, err];
  }

  /** Removes FIFOs a previous daemon made and no live process uses (its unused spares). */
  sweep(inUse: ReadonlySet<string>): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const n of names) {
      const path = join(this.dir, n);
      if (!inUse.has(path) && !this.spare.includes(path)) rmSync(path, { force: true });
    }
  }

  /** Makes a batch in the background (after start-up, so the first exec does not wait). */
  prefill(): Promise<void> {
    if (this.spare.length === 0 && !this.disabled) return this.fill();
    return this.filling ?? Promise.resolve();
  }

  private fill(): Promise<void> {
    this.filling ??= (async () => {
      const [cmd, ...args] = this.mkfifo;
      if (cmd === undefined) throw new Error('no mkfifo command');
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const paths = Array.from({ length: this.batch * 2 }, () =>
        join(this.dir, `${this.prefix}-${this.seq++}`),
      );
      await run(cmd, [...args, '-m', '600', ...paths], { timeout: 10_000 });
      this.spare.push(...paths);
    })()
      .catch((err: unknown) => {
        this.disabled = true;
        console.error(`sandboxd: cannot make FIFOs, processes get plain pipes: ${String(err)}`);
      })
      .finally(() => {
        this.filling = undefined;
      });
    return this.filling;
  }
}

/** Write ends for the child (read-write: the child keeps a reader of its own, see above). */
export function openFifoWriters(fifos: FifoPair): [number, number] {
  const out = openSync(fifos[0], constants.O_RDWR);
  try {
    return [out, openSync(fifos[1], constants.O_RDWR)];
  } catch (err) {
    closeSync(out);
    throw err;
  }
}

/** A non-blocking reader on the event loop (libuv's pipe handle), ending at EOF. */
export function openFifoReader(path: string): Socket {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return new Socket({ fd, readable: true, writable: false });
}
