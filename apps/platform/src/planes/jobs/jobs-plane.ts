/**
 * The jobs plane, built by the composition root (compose.ts): runner, executions service, the
 * execution data server and cron triggers. Everything of another plane comes in through
 * jobs-ports.ts; this file only assembles (ARCHITECTURE.md beside it).
 */
import { join } from 'node:path';
import type { JobExecution } from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { SandboxInfo } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { CronTriggers } from './cron-triggers.js';
import { ExecutionDataServer } from './execution-data-server.js';
import { systemOf, type ExecutionRow } from './execution-rows.js';
import { ExecutionsService } from './executions.service.js';
import { JobRunner, type LiveTask, type TaskUsage } from './job-runner.js';
import { registerJobRunRoutes } from './jobs.routes.js';
import type { JobCatalogue, Sealer, TaskEngine, TaskSetup } from './jobs-ports.js';
import { TaskLogArchive } from './task-logs.js';

export interface JobsPlaneDeps {
  store: Store;
  engine: TaskEngine & { list(): Promise<SandboxInfo[]> };
  jobs: JobCatalogue;
  setup: TaskSetup;
  sealer: Sealer;
  /** Key of the execution data URLs' capabilities (the platform's secret key). */
  dataKey: Uint8Array;
  /** TARMAC_HOME: task logs go under jobs/logs. */
  home: string;
  logger: Logger;
  capacityPerWorkspace: number;
  graceSeconds: number;
  /** An execution's timeout when its request names none (TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS). */
  executionTimeoutSeconds: number;
  maxMemoryMB: number;
  /** The catalogue's view of an execution row (the DELETE answer). */
  view: (row: ExecutionRow) => JobExecution;
  onUsage?: (usage: TaskUsage) => void;
  now?: () => number;
}

export interface JobsPlane {
  runner: JobRunner;
  executions: ExecutionsService;
  register(app: Hono<ServerEnv>, deps: RouteDeps): void;
  /** Serves BL_EXECUTION_DATA_URL on the bridge gateway, then starts the runner and cron. */
  start(dataHost: string, dataPorts: readonly number[]): Promise<void>;
  liveTasks(): LiveTask[];
  stop(): Promise<void>;
}

export function createJobsPlane(d: JobsPlaneDeps): JobsPlane {
  const logs = new TaskLogArchive(join(d.home, 'jobs', 'logs'));
  const data = new ExecutionDataServer(d.dataKey, {
    tasksOf: async (rowId) => {
      const row = await d.store.resources.getById<JobExecution['spec']>(rowId);
      return row && systemOf(row as ExecutionRow).runs ? row.spec.tasks : undefined;
    },
  });
  const runner = new JobRunner({
    resources: d.store.resources,
    engine: d.engine,
    setup: d.setup,
    sealer: d.sealer,
    logs,
    dataUrl: (rowId) => data.urlFor(rowId),
    logger: d.logger,
    capacityPerWorkspace: d.capacityPerWorkspace,
    ...(d.onUsage ? { onUsage: d.onUsage } : {}),
    ...(d.now ? { now: d.now } : {}),
  });
  const executions = new ExecutionsService({
    resources: d.store.resources,
    jobs: d.jobs,
    runner,
    setup: d.setup,
    engine: d.engine,
    sealer: d.sealer,
    logs,
    maxMemoryMB: d.maxMemoryMB,
    graceSeconds: d.graceSeconds,
    executionTimeoutSeconds: d.executionTimeoutSeconds,
    ...(d.now ? { now: d.now } : {}),
  });
  const cron = new CronTriggers({
    jobs: d.jobs,
    state: {
      get: (ws, kind, name, parent) => d.store.resources.get(ws, kind, name, parent),
      create: (row) => d.store.resources.create(row),
      update: (id, patch) => d.store.resources.update(id, patch),
    },
    fire: async (job, executionId, tasks) => {
      await executions.create(job.workspace, job.name, { tasks, executionId, allowQueue: true }, 'cron');
    },
    logger: d.logger,
    ...(d.now ? { now: d.now } : {}),
  });
  return {
    runner,
    executions,
    register: (app, deps) => registerJobRunRoutes(app, deps, executions, d.view),
    async start(dataHost, dataPorts) {
      try {
        await data.listen(dataHost, dataPorts);
      } catch (err) {
        d.logger.error({ err }, 'execution data server did not start: tasks get no BL_EXECUTION_DATA_URL');
      }
      await runner.start();
      cron.start();
    },
    liveTasks: () => runner.liveTasks(),
    async stop() {
      await cron.stop();
      await runner.stop();
      await data.close();
    },
  };
}
