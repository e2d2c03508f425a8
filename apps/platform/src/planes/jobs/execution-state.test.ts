import { describe, expect, it } from 'vitest';
import { backoffMs, executionStatusOf, statsOf, type TaskRun } from './execution-state.js';

const run = (phase: TaskRun['phase'], attempts = 1, outcome?: TaskRun['outcome']): TaskRun => ({
  phase,
  attempts,
  ...(outcome ? { outcome } : {}),
});

describe('execution state', () => {
  it('stats add up and count every attempt beyond the first as retried', () => {
    const runs = [
      run('succeeded', 2),
      run('failed', 3, 'exit'),
      run('running'),
      run('pending', 0),
      run('cancelled', 0),
    ];
    const s = statsOf(runs);
    expect(s).toEqual({ total: 5, success: 1, failure: 1, running: 1, retried: 3, cancelled: 1 });
  });

  it('derives the execution status from its tasks', () => {
    expect(executionStatusOf('queued', [run('pending', 0)])).toBe('queued');
    expect(executionStatusOf('queued', [run('starting'), run('pending', 0)])).toBe('running');
    expect(executionStatusOf('running', [run('succeeded'), run('succeeded')])).toBe('succeeded');
    expect(executionStatusOf('running', [run('succeeded'), run('failed', 1, 'exit')])).toBe('failed');
    expect(executionStatusOf('running', [run('failed', 1, 'timeout'), run('succeeded')])).toBe('timeout');
    expect(executionStatusOf('cancelling', [run('running')])).toBe('cancelling');
    expect(executionStatusOf('cancelling', [run('succeeded'), run('cancelled', 0)])).toBe('cancelled');
    expect(executionStatusOf('succeeded', [run('running')])).toBe('succeeded');
  });

  it('backs off exponentially, capped', () => {
    expect([1, 2, 3, 10].map(backoffMs)).toEqual([1000, 2000, 4000, 30_000]);
  });
});
