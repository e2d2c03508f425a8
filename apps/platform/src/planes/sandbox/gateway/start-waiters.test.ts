import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { closedSignal, lazyClosedSignal } from './start-waiters.js';

class Stream extends EventEmitter {
  closed = false;
  close(): void {
    this.closed = true;
    this.emit('close');
  }
}

describe('the caller-left signal of a held request', () => {
  it('aborts when the response closes, and at once when it closed before it was asked for', () => {
    const open = new Stream();
    const signal = closedSignal(open);
    expect(signal.aborted).toBe(false);
    open.close();
    expect(signal.aborted).toBe(true);
    const gone = new Stream();
    gone.close();
    expect(closedSignal(gone).aborted).toBe(true);
    expect(closedSignal({ once: () => undefined, destroyed: true }).aborted).toBe(true);
  });

  it('is made on first use only, once (no listener for a request that never waits)', () => {
    const stream = new Stream();
    const gone = lazyClosedSignal(stream);
    expect(stream.listenerCount('close')).toBe(0);
    const first = gone();
    expect(gone()).toBe(first);
    expect(stream.listenerCount('close')).toBe(1);
    stream.close();
    expect(first.aborted).toBe(true);
    // A caller that left before the gateway needed to wait: already aborted.
    const late = new Stream();
    const lazy = lazyClosedSignal(late);
    late.close();
    expect(lazy().aborted).toBe(true);
  });
});
