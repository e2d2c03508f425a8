/**
 * The engine spec of one task attempt: the sandbox engine's container (same userns, seccomp,
 * cgroup limits, bridge and egress proxy as a sandbox) running the image's Entrypoint/Cmd instead
 * of sandboxd (`command: []`, packages/engine command-exit.ts). Env, lowest first: the egress
 * defaults (proxy with this task's own credentials, CA), the job's envs merged with the request's
 * `env` (so a job may override, as a sandbox's envs do), then the task variables of reference §2.4.
 */
import { createHash } from 'node:crypto';
import type { HostFile, SandboxSpec, VolumeMount } from '@tarmac/engine';

export const DEFAULT_TASK_KEY = 'TASK_INDEX';

/** Stable, short, valid engine id of one attempt (like the sandbox controller's engine ids). */
export function taskEngineId(rowId: string, index: number, attempt: number): string {
  const digest = createHash('sha256').update(rowId).digest('hex').slice(0, 12);
  return `jt-${digest}-${index}-${attempt}`;
}

/** The proxy user of a task (its egress identity): the execution row and the task index. */
export function taskCredentialId(rowId: string, index: number): string {
  return `${rowId}.${index}`;
}

/** The execution row id of a task's proxy user, or undefined when it is not a task's. */
export function executionOfCredential(id: string): string | undefined {
  const m = /^([0-9a-f-]{36})\.\d+$/.exec(id);
  return m?.[1];
}

export interface TaskContainerInput {
  engineId: string;
  image: string;
  memoryMB: number;
  index: number;
  attempt: number;
  workspace: string;
  job: string;
  execution: string;
  rowId: string;
  env: Record<string, string>;
  defaults: { env: Record<string, string>; files: HostFile[] };
  /** BL_EXECUTION_DATA_URL, when the data server runs. */
  dataUrl: string | undefined;
  /** The attempt's ephemeral volumes (task-volumes.ts). */
  volumes?: VolumeMount[];
  /** The writable layer's size when the job has a volume at `/`. */
  diskMB?: number;
}

export function taskContainerSpec(t: TaskContainerInput): SandboxSpec {
  const taskKey = t.env.BL_TASK_KEY || DEFAULT_TASK_KEY;
  const env: Record<string, string> = { ...t.defaults.env, ...t.env };
  if (t.dataUrl) {
    // The data server answers on the bridge gateway directly: not through the proxy.
    const host = new URL(t.dataUrl).hostname;
    for (const k of ['NO_PROXY', 'no_proxy']) env[k] = [env[k], host].filter(Boolean).join(',');
    env.BL_EXECUTION_DATA_URL = t.dataUrl;
  }
  env.BL_TASK_KEY = taskKey;
  env[taskKey] = String(t.index);
  env.BL_EXECUTION_ID = t.execution;
  env.BL_JOB_NAME = t.job;
  env.BL_TASK_ATTEMPT = String(t.attempt);
  return {
    id: t.engineId,
    image: t.image,
    memoryMB: t.memoryMB,
    env,
    hostname: `task-${t.index}`,
    ports: [],
    volumes: t.volumes ?? [],
    ...(t.diskMB ? { diskMB: t.diskMB } : {}),
    files: t.defaults.files,
    // `record`: the orphan reaper keeps a container whose record (the execution row) exists.
    labels: {
      workspace: t.workspace,
      job: t.job,
      execution: t.execution,
      record: t.rowId,
      task: String(t.index),
      attempt: String(t.attempt),
    },
    command: [],
  };
}
