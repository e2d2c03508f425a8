/**
 * One provider request over undici's `dispatch` with a lean handler (issue 18 throughput goal):
 * undici's `request` wraps every answer in an AsyncResource and a stream.Readable (a few µs and
 * several ticks per request, ~10 % of the gateway's CPU at 64 clients); the gateway only needs
 * the status, the headers and the body as chunks, text, or nothing. Backpressure: chunks nobody
 * has read yet are queued up to HIGH_WATER bytes, then undici stops reading the socket until the
 * reader catches up. Cancellation: the request's Cancellation (or AbortSignal) aborts it, before or
 * after the head arrived.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { Cancellation, type CancelSignal } from './cancellation.js';

/** A provider's answer: status, headers and the body, which the caller must read or dump. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Buffer> & {
    /** The chunks, calling `whenWaiting` each time the reader must wait for the provider. */
    chunks(whenWaiting?: () => void): AsyncGenerator<Buffer>;
    text(): Promise<string>;
    /** The whole body as it came (no UTF-8 decoding: an answer passed on byte for byte). */
    bytes(): Promise<Buffer>;
    dump(): Promise<void>;
  };
}

const HIGH_WATER = 256 * 1024;

type Abort = (err?: Error) => void;

/** Dispatches `opts` and resolves with the answer's head; the body follows through the response. */
export function dispatch(
  dispatcher: Dispatcher,
  opts: Dispatcher.DispatchOptions,
  signal: CancelSignal,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError());
    dispatcher.dispatch(opts, new LeanHandler(signal, resolve, reject));
  });
}

function abortError(): Error {
  const e: NodeJS.ErrnoException = new Error('the caller closed the request');
  e.code = 'UND_ERR_ABORTED';
  return e;
}

class LeanHandler implements Dispatcher.DispatchHandlers, UpstreamResponse {
  statusCode = 0;
  /** The head's raw name/value list; `headers` reads it on first use (most answers never need it). */
  private rawHeaders: Buffer[] | string[] = [];
  private parsedHeaders: IncomingHttpHeaders | undefined;
  private abort: Abort | undefined;
  private resumeSocket: (() => void) | undefined;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private paused = false;
  private done = false;
  private failed: Error | undefined;
  private discard = false;
  /** `text()` reads the whole body: no pausing (the reader takes everything at the end). */
  private whole = false;
  /** Wakes the reader waiting for a chunk, the end or an error. */
  private wake: (() => void) | undefined;
  private settled = false;
  private readonly onCancel = () => this.abort?.(abortError());

  constructor(
    private readonly signal: CancelSignal,
    private readonly resolve: (r: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {
    addListener(signal, this.onCancel);
  }

  /** The handler is its own body (no object and closures per answer). */
  get body(): UpstreamResponse['body'] {
    return this;
  }

  [Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    return this.chunks();
  }

  async text(): Promise<string> {
    return (await this.bytes()).toString('utf8');
  }

  onConnect(abort: Abort): void {
    this.abort = abort;
    if (this.signal.aborted) abort(abortError());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the real answer follows
    this.statusCode = statusCode;
    this.resumeSocket = resume;
    this.rawHeaders = rawHeaders ?? [];
    this.settled = true;
    this.resolve(this);
    return true;
  }

  get headers(): IncomingHttpHeaders {
    if (this.parsedHeaders) return this.parsedHeaders;
    const h: Record<string, string | string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i]!.toString().toLowerCase();
      const value = raw[i + 1]!.toString();
      const seen = h[key];
      if (seen === undefined) h[key] = value;
      else if (Array.isArray(seen)) seen.push(value);
      else h[key] = [seen, value];
    }
    return (this.parsedHeaders = h);
  }

  onData(chunk: Buffer): boolean {
    if (this.discard) return true;
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.wakeReader();
    if (this.queued >= HIGH_WATER && !this.whole) this.paused = true;
    return !this.paused;
  }

  onComplete(): void {
    this.done = true;
    removeListener(this.signal, this.onCancel);
    this.wakeReader();
  }

  onError(err: Error): void {
    removeListener(this.signal, this.onCancel);
    if (!this.settled) {
      this.settled = true;
      this.reject(err);
      return;
    }
    this.failed = err;
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private waitForMore(): Promise<void> {
    return new Promise((r) => (this.wake = r));
  }

  private take(): Buffer {
    const chunk = this.queue.shift()!;
    this.queued -= chunk.length;
    if (this.paused && this.queued < HIGH_WATER / 2) {
      this.paused = false;
      this.resumeSocket?.();
    }
    return chunk;
  }

  private unpause(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeSocket?.();
  }

  async *chunks(whenWaiting?: () => void): AsyncGenerator<Buffer> {
    for (;;) {
      if (this.queue.length > 0) yield this.take();
      else if (this.failed) throw this.failed;
      else if (this.done) return;
      else {
        whenWaiting?.();
        await this.waitForMore();
      }
    }
  }

  async bytes(): Promise<Buffer> {
    this.whole = true;
    this.unpause();
    while (!this.done && !this.failed) await this.waitForMore();
    if (this.failed) throw this.failed;
    const body = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue);
    this.queue.length = 0;
    this.queued = 0;
    return body;
  }

  /** Reads the rest and forgets it (the connection goes back to the pool). */
  async dump(): Promise<void> {
    this.discard = true;
    this.queue.length = 0;
    this.queued = 0;
    this.unpause();
    while (!this.done && !this.failed) await this.waitForMore();
  }
}

function addListener(signal: CancelSignal, fn: () => void): void {
  if (signal instanceof Cancellation) signal.onAbort(fn);
  else signal.addEventListener('abort', fn, { once: true });
}

function removeListener(signal: CancelSignal, fn: () => void): void {
  if (signal instanceof Cancellation) signal.offAbort(fn);
  else signal.removeEventListener('abort', fn);
}
