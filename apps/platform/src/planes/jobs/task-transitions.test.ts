import { describe, expect, it } from 'vitest';
import { conditionOf, executionStatusOf, statsOf, type TaskRun } from './execution-state.js';
import { endedRun, isExpired, vanishedRun } from './task-transitions.js';

const plan = { timeoutSeconds: 60, maxRetries: 2, executionTimeoutSeconds: 30 };
const running: TaskRun = {
  phase: 'running',
  attempts: 1,
  engineId: 'jt-x-0-1',
  startedMs: 1000,
  ip: '10.0.0.2',
};
const ctx = { cancelling: false, expired: false, stoppedForTimeout: false, now: 5000 };

describe('task transitions', () => {
  it('exit 0 succeeds even while winding down (a task that finished in its grace)', () => {
    expect(endedRun(running, { exitCode: 0 }, plan, { ...ctx, expired: true }).phase).toBe('succeeded');
  });

  it("the execution's timeout fails a stopped task as `deadline`, not retried", () => {
    const next = endedRun(running, { exitCode: 143 }, plan, { ...ctx, expired: true });
    expect(next).toMatchObject({ phase: 'failed', outcome: 'deadline', exitCode: 143 });
    expect(next.ip).toBeUndefined();
  });

  it('a non-zero exit is retried with backoff while retries are left; its own timeout is not', () => {
    expect(endedRun(running, { exitCode: 3 }, plan, ctx)).toMatchObject({
      phase: 'pending',
      outcome: 'exit',
      notBefore: 6000,
    });
    expect(endedRun(running, { exitCode: 137 }, plan, { ...ctx, stoppedForTimeout: true })).toMatchObject({
      phase: 'failed',
      outcome: 'timeout',
    });
  });

  it('a container gone: never made → again (or cancelled past the deadline); lost → failed attempt', () => {
    const starting: TaskRun = { phase: 'starting', attempts: 1, engineId: 'jt-x-0-1' };
    expect(vanishedRun(starting, 2, false, 0)).toEqual({ phase: 'pending', attempts: 0 });
    expect(vanishedRun(starting, 2, true, 0)).toMatchObject({ phase: 'cancelled', outcome: 'deadline' });
    expect(vanishedRun(running, 0, false, 0)).toMatchObject({ phase: 'failed', outcome: 'error' });
    expect(vanishedRun(running, 0, true, 0)).toMatchObject({ phase: 'failed', outcome: 'deadline' });
  });

  it('the execution expires from its creation, and stays expired once seen', () => {
    const created = new Date(0).toISOString();
    expect(isExpired(created, plan, undefined, 29_999)).toBe(false);
    expect(isExpired(created, plan, undefined, 30_000)).toBe(true);
    expect(isExpired(created, {}, undefined, 10 ** 12)).toBe(false); // rows from before the field
    expect(isExpired(created, plan, created, 0)).toBe(true);
  });

  it('an expired execution ends `timeout` with stats that add up and a condition on each task', () => {
    const runs: TaskRun[] = [
      { phase: 'succeeded', attempts: 1 },
      { phase: 'failed', attempts: 1, outcome: 'deadline', exitCode: 143 },
      { phase: 'cancelled', attempts: 0, outcome: 'deadline' },
    ];
    expect(executionStatusOf('running', runs)).toBe('timeout');
    const s = statsOf(runs);
    expect(s.success + s.failure + s.cancelled + s.running).toBe(s.total);
    expect(conditionOf(runs[1]!, plan, 'now')).toMatchObject({
      reason: 'ExecutionTimeoutExceeded',
      executionReason: 'timeout',
    });
    expect(String(conditionOf(runs[2]!, plan, 'now')?.message)).toContain('Not started');
    // A running task being stopped carries no condition yet.
    expect(conditionOf({ ...running, outcome: 'deadline' }, plan, 'now')).toBeUndefined();
    // Cancel wins over the timeout when both happened.
    expect(executionStatusOf('cancelling', runs)).toBe('cancelled');
  });
});
