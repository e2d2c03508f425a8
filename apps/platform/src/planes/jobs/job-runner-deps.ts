/** What the job runner (job-runner.ts) is handed, and what it tells: usage and live task identities. */
import type { SandboxInfo } from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { Logger } from 'pino';
import type { ExecutionRowStore } from './execution-rows.js';
import type { Sealer, TaskEngine, TaskSetup } from './jobs-ports.js';
import type { TaskLogArchive } from './task-logs.js';

export interface TaskUsage {
  workspace: string;
  job: string;
  rowId: string;
  memoryMB: number;
  startedMs: number;
  endedMs: number;
}

export interface JobRunnerDeps {
  resources: ExecutionRowStore & {
    listByKind<S>(kind: string, filter?: { status?: readonly string[] }): Promise<ResourceRow<S>[]>;
  };
  engine: TaskEngine & { list(): Promise<SandboxInfo[]> };
  setup: TaskSetup;
  sealer: Sealer;
  logs: TaskLogArchive;
  /** BL_EXECUTION_DATA_URL of an execution row, when the data server runs. */
  dataUrl: (rowId: string) => string | undefined;
  logger: Logger;
  /** Task containers running at once per workspace (TARMAC_JOBS_WORKSPACE_CAPACITY). */
  capacityPerWorkspace: number;
  /** Pass interval while executions are active (default 100 ms). */
  tickMs?: number;
  /** Pass interval while none is active (default 2 s); kicks still run a pass at once. */
  idleTickMs?: number;
  now?: () => number;
  /** Told when an attempt's container ended (metering: job_compute_runtime_gbs). */
  onUsage?: (usage: TaskUsage) => void;
}

/** An egress identity of a running task (the proxy checks credentials and source address). */
export interface LiveTask {
  id: string;
  workspace: string;
  name: string;
  ip: string;
}
