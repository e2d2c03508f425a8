/**
 * Every call's record (issue 18 "Usage tracking"): tokens, latency, status, model, caller. The
 * request path only appends to memory; a batch goes to the sink (the metering plane, handed in by
 * compose.ts) every `flushMs` or `maxBatch` calls, after the call's answer was written. The write
 * is not free for the calls that follow: with SQLite (synchronous under its async API) a batch
 * holds the event loop ~1–3 ms (its transaction's statements and commit, profiled on the 2-core
 * host), once per batch rather than once per call. A failed batch is written again as it was
 * before anything newer (the sink keys a batch by its calls, so a write that landed but reported
 * failure is not counted twice); the queue is bounded, and what a crash loses is at most one flush
 * interval.
 */
import type { Usage } from './adapters/adapter.js';

export interface ModelCall {
  /** Unique per call: the sink's idempotency key. */
  requestId: string;
  at: number;
  accountId: string;
  workspace: string;
  model: string;
  modelUuid: string;
  provider: string;
  /** Principal id of the caller. */
  caller: string;
  status: number;
  latencyMs: number;
  usage: Usage | undefined;
}

export interface UsageSink {
  record(calls: readonly ModelCall[]): Promise<void>;
}

export interface UsageRecorderOptions {
  flushMs?: number;
  maxBatch?: number;
  /** Calls kept while the sink fails; the oldest go first beyond it. */
  maxQueued?: number;
  onError?: (err: unknown) => void;
}

export class UsageRecorder {
  private queue: ModelCall[] = [];
  /** A batch whose write failed: sent again as it was (same idempotency keys) before anything else. */
  private failed: ModelCall[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly flushMs: number;
  private readonly maxBatch: number;
  private readonly maxQueued: number;

  constructor(
    private readonly sink: UsageSink,
    private readonly o: UsageRecorderOptions = {},
  ) {
    this.flushMs = o.flushMs ?? 1000;
    this.maxBatch = o.maxBatch ?? 500;
    this.maxQueued = o.maxQueued ?? 100_000;
  }

  add(call: ModelCall): void {
    this.queue.push(call);
    if (this.queue.length > this.maxQueued) this.queue.splice(0, this.queue.length - this.maxQueued);
    if (this.queue.length >= this.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref?.();
    }
  }

  /** Writes what is queued; resolves when it is written (or failed and re-queued). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0 && !this.failed) return;
    const batch = this.failed ?? this.queue.splice(0, this.maxBatch);
    this.failed = undefined;
    this.flushing = this.sink.record(batch).then(
      () => undefined,
      (err: unknown) => {
        this.o.onError?.(err);
        this.failed = batch;
      },
    );
    await this.flushing;
    this.flushing = undefined;
    if ((this.queue.length > 0 || this.failed) && !this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref?.();
    }
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
