import { EventEmitter } from 'node:events';

/**
 * "The caller went away", one per request: undici takes an EventEmitter with `aborted` as a
 * signal, which costs a fraction of an AbortController's EventTarget on the hot path.
 */
export class Cancellation extends EventEmitter {
  aborted = false;

  cancel(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** What `send` takes to cancel a request: a Cancellation, or an AbortSignal (tests). */
export type CancelSignal = Cancellation | AbortSignal;
