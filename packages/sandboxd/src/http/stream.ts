// Long-lived streamed bodies (watch, logs stream, streamed exec): a ReadableStream fed by a
// producer that gets `push`/`close` and returns its cleanup, which runs when the stream ends or
// the client goes away (cancel).
//
// Bounded (issue 19 item 6): a StreamBudget admits at most `max` such streams at once (429 past
// it), and a stream whose reader falls `backlogBytes` behind (a stalled client on a chatty
// process) is ended instead of queueing without limit in sandboxd's memory.
import { HttpError } from './errors.js';

const encoder = new TextEncoder();

export interface LineSink {
  push(text: string): void;
  close(): void;
  readonly closed: boolean;
}

export class StreamBudget {
  private open = 0;

  constructor(
    readonly max: number,
    readonly backlogBytes: number,
  ) {}

  get count(): number {
    return this.open;
  }

  /** 429 when `max` streams are open (call before starting work a stream would report on). */
  check(): void {
    if (this.open >= this.max) throw new HttpError(429, `too many open streams: the limit is ${this.max}`);
  }

  /** A stream counted against the budget until it ends or its client goes away. */
  stream(start: (sink: LineSink) => () => void): ReadableStream<Uint8Array> {
    this.open++;
    let released = false;
    return producerStream(start, this.backlogBytes, () => {
      if (!released) this.open--;
      released = true;
    });
  }
}

export function producerStream(
  start: (sink: LineSink) => () => void,
  backlogBytes = Infinity,
  onEnd: () => void = () => undefined,
): ReadableStream<Uint8Array> {
  let cleanup: (() => void) | undefined;
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    cleanup?.();
    onEnd();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const sink: LineSink = {
          push(text) {
            if (closed) return;
            controller.enqueue(encoder.encode(text));
            // desiredSize = highWaterMark − queued bytes: the reader is this far behind.
            if (-(controller.desiredSize ?? 0) > backlogBytes) sink.close();
          },
          close() {
            if (closed) return;
            finish();
            controller.close();
          },
          get closed() {
            return closed;
          },
        };
        cleanup = start(sink);
        if (closed) cleanup();
      },
      cancel() {
        finish();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
}

/** Headers of a chunked streamed reply. */
export function streamHeaders(contentType: string): Record<string, string> {
  return { 'content-type': contentType, 'x-accel-buffering': 'no' };
}
