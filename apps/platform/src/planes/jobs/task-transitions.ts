/**
 * The runner's pure rules for one task (issue 17, ARCHITECTURE.md "Retries", "Timeout"): the next
 * state of a task whose container stopped or vanished, and when an execution is past its own
 * timeout. No I/O: job-runner.ts applies them.
 */
import type { SandboxInfo } from '@tarmac/engine';
import { backoffMs, type ExecutionPlan, type TaskRun } from './execution-state.js';

/** How the execution stands while its task ended. */
export interface EndContext {
  /** DELETE asked: whatever did not succeed is cancelled. */
  cancelling: boolean;
  /** The execution's timeout passed: whatever did not succeed is stopped by it. */
  expired: boolean;
  /** The runner sent this container a stop for the task's own timeout. */
  stoppedForTimeout: boolean;
  now: number;
}

/** The next state of a task whose container stopped. */
export function endedRun(
  r: TaskRun,
  info: Pick<SandboxInfo, 'exitCode'>,
  plan: Pick<ExecutionPlan, 'timeoutSeconds' | 'maxRetries'>,
  c: EndContext,
): TaskRun {
  const base = { ...r, exitCode: info.exitCode };
  delete base.ip;
  if (info.exitCode === 0) return { ...base, phase: 'succeeded' };
  if (c.cancelling) return { ...base, phase: 'cancelled', outcome: 'cancelled' };
  if (c.expired) return { ...base, phase: 'failed', outcome: 'deadline' };
  const ranMs = c.now - (r.startedMs ?? c.now);
  // Killed by us for its timeout (also judged after a restart: the start time is persisted).
  if (c.stoppedForTimeout || ranMs >= plan.timeoutSeconds * 1000) {
    return { ...base, phase: 'failed', outcome: 'timeout' };
  }
  return failedRun(base, plan.maxRetries, 'exit', info.exitCode, c.now);
}

/** A failed attempt: again after the backoff while retries are left (issue 17), else failed. */
export function failedRun(
  r: TaskRun,
  maxRetries: number,
  outcome: 'exit' | 'error',
  exitCode: number | null,
  now: number,
): TaskRun {
  const next: TaskRun = { ...r, exitCode, outcome };
  delete next.ip;
  if (r.attempts <= maxRetries) {
    delete next.engineId;
    delete next.startedMs;
    return { ...next, phase: 'pending', notBefore: now + backoffMs(r.attempts) };
  }
  return { ...next, phase: 'failed' };
}

/** A container that is gone: never made (start it again, it never ran) or lost while running. */
export function vanishedRun(r: TaskRun, maxRetries: number, expired: boolean, now: number): TaskRun {
  if (r.phase === 'starting') {
    const again: TaskRun = { ...r, phase: 'pending', attempts: r.attempts - 1 };
    delete again.engineId;
    return expired ? { ...again, phase: 'cancelled', outcome: 'deadline' } : again;
  }
  if (expired) {
    const next: TaskRun = { ...r, phase: 'failed', outcome: 'deadline', exitCode: null };
    delete next.ip;
    return next;
  }
  return failedRun(r, maxRetries, 'error', null, now);
}

/**
 * Whether the execution's own timeout (JobExecution `spec.timeout`, counted from its creation so
 * a queued execution is bounded too) has passed — or was seen passed before (persisted).
 */
export function isExpired(
  createdAt: string,
  plan: Pick<ExecutionPlan, 'executionTimeoutSeconds'>,
  expiredAt: string | undefined,
  now: number,
): boolean {
  if (expiredAt) return true;
  if (plan.executionTimeoutSeconds === undefined) return false;
  return now - Date.parse(createdAt) >= plan.executionTimeoutSeconds * 1000;
}
