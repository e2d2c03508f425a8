/**
 * The stored shape of one job execution and the pure rules over it (issue 17). An execution is a
 * resource row of kind `job-execution` (the catalogue's read side lists it): `spec` is the
 * reference's execution spec, `status` the execution status, and `system` holds
 *  - `tasks`/`stats`: the reference's view (JobExecutionTask[], stats), rewritten with every change;
 *  - `runs`: what the runner needs per task (attempts, the container of the current attempt,
 *    backoff, start time) — persisted so a restarted platform re-attaches instead of re-running;
 *  - `plan`: what every task runs with, fixed at create (image, memory, timeout, retries, env).
 */
import type { JobExecution } from '@tarmac/contract';

export type ExecutionStatus = JobExecution['status'];
export type ExecutionTask = JobExecution['tasks'][number];
export type ExecutionStats = JobExecution['stats'];

/** Where one task is, for the runner. `starting`: a container is being made (engineId written first). */
export type RunPhase = 'pending' | 'starting' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface TaskRun {
  phase: RunPhase;
  /** Containers started so far (1 = first attempt). */
  attempts: number;
  /** Container of the current attempt; written before it is created (restart: adopt, never twice). */
  engineId?: string;
  /** Task container address while it runs (egress identifies it by it). */
  ip?: string;
  startedMs?: number;
  /** Backoff: not started again before this (ms since epoch). */
  notBefore?: number;
  /**
   * Why it ended, when not by exit 0: 'exit', 'timeout' (its own), 'cancelled', 'error', or
   * 'deadline' (the execution's timeout: killed while running, or never started).
   */
  outcome?: 'exit' | 'timeout' | 'cancelled' | 'error' | 'deadline';
  exitCode?: number | null;
}

export interface ExecutionPlan {
  image: string;
  memoryMB: number;
  timeoutSeconds: number;
  maxRetries: number;
  /** The job's envs merged with the request's `env`, sealed (SecretBox, context = row id). */
  envSealed: string;
  /** Seconds between SIGTERM and SIGKILL on cancel. */
  graceSeconds: number;
  /** The image's stored bytes (engine ImageInfo.sizeBytes): job_image_storage_gbs while tasks run. */
  imageSizeBytes?: number;
  /**
   * Seconds the whole execution may take from its creation (JobExecution `spec.timeout`): past it
   * running tasks get SIGTERM + grace, none start, and it ends `timeout`. Absent in rows made
   * before it existed (no deadline).
   */
  executionTimeoutSeconds?: number;
  /** The job's ephemeral volumes (reference §2.4 JobVolume), made fresh for every attempt. */
  volumes?: TaskVolume[];
  /** A JobVolume at `/` (reference §2.4 "root overlay"): the task's writable layer of this size. */
  rootDiskMB?: number;
}

/** One JobVolume as a task mounts it (task-volumes.ts). */
export interface TaskVolume {
  mountPath: string;
  sizeMB: number;
  readOnly: boolean;
}

export interface ExecutionSystem {
  tasks: ExecutionTask[];
  stats: ExecutionStats;
  runs: TaskRun[];
  plan: ExecutionPlan;
  startedAt?: string;
  completedAt?: string;
  /** When the execution's timeout was seen exceeded (then it only winds down). */
  expiredAt?: string;
  /** Cumulative GB-seconds charged so far (metering: job_compute_runtime_gbs). */
  [key: string]: unknown;
}

export const TERMINAL_EXECUTION: readonly ExecutionStatus[] = ['succeeded', 'failed', 'cancelled', 'timeout'];
export const ACTIVE_EXECUTION: readonly ExecutionStatus[] = ['queued', 'pending', 'running', 'cancelling'];
const DONE: readonly RunPhase[] = ['succeeded', 'failed', 'cancelled'];

export const isDone = (r: TaskRun) => DONE.includes(r.phase);
export const isLive = (r: TaskRun) => r.phase === 'starting' || r.phase === 'running';

/** Retry backoff (issue 17): 1 s, 2 s, 4 s, … capped at 30 s, after the nth failed attempt. */
export function backoffMs(failedAttempts: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, failedAttempts - 1));
}

export function taskName(index: number): string {
  return `task-${index}`;
}

/** The reference's task status for a run. */
export function taskStatus(r: TaskRun): ExecutionTask['status'] {
  switch (r.phase) {
    case 'starting':
      return 'reconciling';
    default:
      return r.phase;
  }
}

/** stats always add up: total = success + failure + cancelled + running + waiting. */
export function statsOf(runs: readonly TaskRun[]): ExecutionStats {
  const count = (p: (r: TaskRun) => boolean) => runs.filter(p).length;
  return {
    total: runs.length,
    success: count((r) => r.phase === 'succeeded'),
    failure: count((r) => r.phase === 'failed'),
    running: count(isLive),
    // Attempts beyond the first, over all tasks.
    retried: runs.reduce((n, r) => n + Math.max(0, r.attempts - 1), 0),
    cancelled: count((r) => r.phase === 'cancelled'),
  };
}

/**
 * The execution status from its runs: terminal once every task is done (cancelled if cancelling or
 * any task was cancelled; timeout if a task timed out; failed if any failed), else running once a
 * task has started, else queued (waiting for capacity) — cancelling sticks until all are done.
 */
export function executionStatusOf(current: ExecutionStatus, runs: readonly TaskRun[]): ExecutionStatus {
  if (TERMINAL_EXECUTION.includes(current)) return current;
  if (runs.every(isDone)) {
    if (current === 'cancelling') return 'cancelled';
    // The execution's own timeout cancels its waiting tasks: still `timeout`, not `cancelled`.
    if (runs.some((r) => r.outcome === 'deadline')) return 'timeout';
    if (runs.some((r) => r.phase === 'cancelled')) return 'cancelled';
    if (runs.some((r) => r.outcome === 'timeout')) return 'timeout';
    return runs.some((r) => r.phase === 'failed') ? 'failed' : 'succeeded';
  }
  if (current === 'cancelling') return 'cancelling';
  return runs.some((r) => isLive(r) || r.attempts > 0) ? 'running' : 'queued';
}

/** A condition (reference §2.4 JobExecutionTask.conditions) saying why a task ended. */
export function conditionOf(
  r: TaskRun,
  plan: Pick<ExecutionPlan, 'timeoutSeconds' | 'executionTimeoutSeconds'>,
  at: string,
): Record<string, unknown> | undefined {
  const timeoutSeconds = plan.timeoutSeconds;
  switch (r.outcome) {
    case 'deadline':
      // Only once the task is over: a running one being stopped keeps no condition yet.
      if (!isDone(r)) return undefined;
      return {
        type: 'Timeout',
        state: 'True',
        reason: 'ExecutionTimeoutExceeded',
        message:
          r.phase === 'cancelled'
            ? `Not started: the execution exceeded its timeout of ${plan.executionTimeoutSeconds ?? 0} s`
            : `Stopped (attempt ${r.attempts}): the execution exceeded its timeout of ${plan.executionTimeoutSeconds ?? 0} s`,
        severity: 'Error',
        executionReason: 'timeout',
        lastTransitionTime: at,
      };
    case 'timeout':
      return {
        type: 'Timeout',
        state: 'True',
        reason: 'TimeoutExceeded',
        message: `Killed after the task timeout of ${timeoutSeconds} s (attempt ${r.attempts})`,
        severity: 'Error',
        executionReason: 'timeout',
        lastTransitionTime: at,
      };
    case 'exit':
      return {
        type: 'Failed',
        state: 'True',
        reason: 'NonZeroExit',
        message: `Exited with code ${r.exitCode ?? 'unknown'} (attempt ${r.attempts})`,
        severity: 'Error',
        executionReason: 'exit',
        lastTransitionTime: at,
      };
    case 'error':
      return {
        type: 'Failed',
        state: 'True',
        reason: 'StartFailed',
        message: `The task container could not run (attempt ${r.attempts})`,
        severity: 'Error',
        executionReason: 'error',
        lastTransitionTime: at,
      };
    case 'cancelled':
      return {
        type: 'Cancelled',
        state: 'True',
        reason: 'ExecutionCancelled',
        message: 'The execution was cancelled',
        severity: 'Info',
        executionReason: 'cancelled',
        lastTransitionTime: at,
      };
    default:
      return undefined;
  }
}

/** Seconds as the reference's duration string ("30m", "90s"). */
export function durationText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}
