// Long-lived streamed bodies (watch, logs stream, streamed exec): a ReadableStream fed by a
// producer that gets `push`/`close` and returns its cleanup, which runs when the stream ends or
// the client goes away (cancel).
const encoder = new TextEncoder();

export interface LineSink {
  push(text: string): void;
  close(): void;
  readonly closed: boolean;
}

export function producerStream(start: (sink: LineSink) => () => void): ReadableStream<Uint8Array> {
  let cleanup: (() => void) | undefined;
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    cleanup?.();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const sink: LineSink = {
        push(text) {
          if (!closed) controller.enqueue(encoder.encode(text));
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
  });
}

/** Headers of a chunked streamed reply. */
export function streamHeaders(contentType: string): Record<string, string> {
  return { 'content-type': contentType, 'x-accel-buffering': 'no' };
}
