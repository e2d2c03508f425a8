import type { ScheduleExecution, ScheduleInput } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import type { SecretBox } from '../../../framework/secrets.js';

/**
 * The stored shape of a schedule (resources kind `sandbox-schedule`, parent = sandbox name, name =
 * schedule id) and of an execution (kind `sandbox-schedule-execution`, same parent). A schedule's
 * `status` column holds its type, so the list's `type=` filter is the store's status filter.
 */
export interface ScheduleSpec {
  type: 'cron' | 'at';
  value: string;
  /** `env` values are sealed at rest (the reference: "may contain secrets"). */
  input: ScheduleInput;
  maxExecutions: number;
}

export interface ScheduleSystem {
  /** Epoch of the current timing: a cron entry fires for instants after it (create or update time). */
  armedAt: string;
  /** The last instant claimed; written BEFORE the process is started, so a restart never runs it again. */
  lastRunAt?: string;
  /** Execution ids, oldest first, at most maxExecutions (older records are deleted). */
  executions?: string[];
}

export type ScheduleRow = ResourceRow<ScheduleSpec>;
export type ExecutionRow = ResourceRow<ScheduleExecution>;

/** Execution rows' `status` column: `running` until the process ended (the runner resumes those). */
export const EXECUTION_RUNNING = 'running';
export const EXECUTION_DONE = 'done';

export const scheduleSecretContext = (workspace: string, sandbox: string, id: string) =>
  `${workspace}/sandbox/${sandbox}/schedule/${id}`;

export function sealEnv(
  box: SecretBox,
  env: Record<string, string> | undefined,
  context: string,
): Record<string, string> | undefined {
  if (!env) return undefined;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, box.seal(v, context)]));
}

export function openEnv(
  box: SecretBox,
  env: Record<string, string> | undefined,
  context: string,
): Record<string, string> | undefined {
  if (!env) return undefined;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, box.open(v, context)]));
}

/** Instants after this are still to fire: the last one claimed, else (cron) the time it was armed. */
export function afterOf(row: ScheduleRow): Date {
  const s = row.system as unknown as ScheduleSystem;
  if (s.lastRunAt && (row.spec.type === 'at' || s.lastRunAt >= s.armedAt)) return new Date(s.lastRunAt);
  return new Date(row.spec.type === 'at' ? 0 : s.armedAt);
}
