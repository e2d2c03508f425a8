import { describe, expect, it } from 'vitest';
import { MemoryLedger, memoryCapacityMB } from './capacity.js';
import { InsufficientCapacityError } from './errors.js';

describe('MemoryLedger (issue 19 item 13)', () => {
  it('capacity is host memory times the overcommit ratio', () => {
    expect(memoryCapacityMB(24_000, 1)).toBe(24_000);
    expect(memoryCapacityMB(24_000, 1.5)).toBe(36_000);
  });

  it('admits up to the capacity and refuses past it, with the figures', () => {
    const ledger = new MemoryLedger(4096);
    const live = new Map([
      ['a', 2048],
      ['b', 1024],
    ]);
    expect(() => ledger.reserve('c', 1024, live)).not.toThrow();
    expect(() => ledger.check('d', 1, live)).toThrow(InsufficientCapacityError);
    expect(() => ledger.check('d', 1, live)).toThrow(/1 MB asked, 0 MB of 4096 MB left/);
  });

  it('counts creates in flight, so two concurrent creates cannot both take the last memory', () => {
    const ledger = new MemoryLedger(4096);
    const release = ledger.reserve('x', 3072, new Map());
    expect(() => ledger.reserve('y', 2048, new Map())).toThrow(/2048 MB asked, 1024 MB of 4096 MB left/);
    release();
    expect(() => ledger.reserve('y', 2048, new Map())).not.toThrow();
  });

  it('a sandbox already counted (live and reserved) is counted once; a resize replaces its own limit', () => {
    const ledger = new MemoryLedger(4096);
    ledger.reserve('x', 1024, new Map());
    // Its record became live before the reservation was dropped: still 1024, not 2048.
    expect(() => ledger.check('y', 3072, new Map([['x', 1024]]))).not.toThrow();
    // Resizing x from 1024 to 4096 on an otherwise empty host fits.
    expect(() => ledger.check('x', 4096, new Map([['x', 1024]]))).not.toThrow();
    expect(() => ledger.check('x', 4097, new Map([['x', 1024]]))).toThrow(InsufficientCapacityError);
  });
});
