/**
 * "The caller went away", one per request. Not an EventEmitter nor an AbortController: the
 * gateway's own code is the only listener (upstream-response.ts, one listener per attempt), and an
 * emitter's construction, `once` wrapper and `removeListener` were ~3 % of the gateway's CPU at 64
 * clients (bench/model-gateway.ts).
 */
export class Cancellation {
  aborted = false;
  private listeners: Array<() => void> = [];

  cancel(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const fn of listeners) fn();
  }

  /** Calls `fn` once when cancelled (never when already cancelled: check `aborted` first). */
  onAbort(fn: () => void): void {
    this.listeners.push(fn);
  }

  offAbort(fn: () => void): void {
    const i = this.listeners.indexOf(fn);
    if (i >= 0) this.listeners.splice(i, 1);
  }
}

/** What `send` takes to cancel a request: a Cancellation, or an AbortSignal (tests). */
export type CancelSignal = Cancellation | AbortSignal;
