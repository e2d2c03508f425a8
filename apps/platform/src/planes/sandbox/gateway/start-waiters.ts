/**
 * Requests that reach a sandbox before it is live wait here instead of getting a 503 (issue 14
 * item 1: the vendor SDK documents that callers need not wait for a deploy, and retries GETs
 * only, so a write or exec right after `create` must be held, not refused).
 *
 * Event-driven, never polled: the sandbox controller reports every record it reconciled
 * (`notify`, wired in sandbox-plane.ts from its onRecord hook, plus the change feed's notices of
 * API writes such as a delete), and a waiter only wakes to look at the record again. Bounded: at
 * most `maxHeld` requests wait at once (beyond that the 503 comes back at once), and each waits at
 * most the gateway's start timeout (config TARMAC_SANDBOX_START_WAIT_SECONDS).
 */
export interface StartWaiter {
  /** Resolves on the next notice about this sandbox, after `ms`, or when `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops listening (always call it: finally). */
  cancel(): void;
}

export class StartWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private held = 0;
  private closed = false;

  constructor(readonly maxHeld: number) {}

  /** How many requests are held right now. */
  get size(): number {
    return this.held;
  }

  /** Takes one of the `maxHeld` places; false when all are taken (or after close). */
  hold(): boolean {
    if (this.closed || this.held >= this.maxHeld) return false;
    this.held++;
    return true;
  }

  release(): void {
    this.held = Math.max(0, this.held - 1);
  }

  /**
   * Listens for notices about one sandbox. Call it BEFORE reading the record, so a notice that
   * lands between the read and the wait is not lost.
   */
  watch(workspace: string, name: string): StartWaiter {
    const key = keyOf(workspace, name);
    let fired = false;
    let wake: (() => void) | undefined;
    const listener = () => {
      fired = true;
      wake?.();
    };
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(listener);
    const cancel = () => {
      const current = this.waiting.get(key);
      current?.delete(listener);
      if (current?.size === 0) this.waiting.delete(key);
    };
    return {
      next: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (fired || this.closed || signal?.aborted) return resolve();
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, ms));
          signal?.addEventListener('abort', done, { once: true });
          wake = done;
        }),
      cancel,
    };
  }

  /** Something about this sandbox changed: every waiter looks again. */
  notify(workspace: string, name: string): void {
    for (const listener of [...(this.waiting.get(keyOf(workspace, name)) ?? [])]) listener();
  }

  /** Shutdown: wakes everyone (they answer 503) and holds no more. */
  close(): void {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const listener of [...set]) listener();
  }
}

const keyOf = (workspace: string, name: string) => `${workspace}\u0000${name}`;
