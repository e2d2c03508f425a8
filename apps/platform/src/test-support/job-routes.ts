// The jobs plane's routes for in-process HTTP tests: over the test's store, its runner never
// started (no engine here: tests/e2e/jobs runs tasks on the real engine). Engine calls fail with
// EngineUnavailableError, the way an engine that cannot answer does.
import { EngineUnavailableError } from '@tarmac/engine';
import type { RouteDeps } from '@tarmac/server-kit';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import type { PlatformDeps } from '../app.js';
import { SecretBox } from '../framework/secrets.js';
import { jobReader } from '../planes/catalogue/jobs/job-reader.js';
import { toExecution } from '../planes/catalogue/jobs/job-executions.service.js';
import { createJobsPlane, type JobsPlane, type JobsPlaneDeps } from '../planes/jobs/jobs-plane.js';

/** The jobs plane's engine and setup when there is none: every call is EngineUnavailableError. */
export function unavailableJobsEngine(): Pick<JobsPlaneDeps, 'engine' | 'setup'> {
  const noEngine = async (): Promise<never> => {
    throw new EngineUnavailableError('jobs runtime', new Error('no engine in in-process HTTP tests'));
  };
  return {
    engine: {
      createSandbox: noEngine,
      inspect: noEngine,
      stopSandbox: noEngine,
      deleteSandbox: noEngine,
      readLog: noEngine,
      ensureImage: noEngine,
      list: noEngine,
      createVolume: noEngine,
      deleteVolume: noEngine,
      listVolumes: noEngine,
    },
    setup: { defaults: noEngine, resolveImage: async (_workspace, ref) => ref },
  };
}

export function testJobsPlane(store: Store, secretKey: Uint8Array, logger: Logger): JobsPlane {
  return createJobsPlane({
    store,
    ...unavailableJobsEngine(),
    jobs: jobReader(store, new SecretBox(secretKey)),
    sealer: new SecretBox(secretKey),
    dataKey: secretKey,
    home: '/nonexistent',
    logger,
    capacityPerWorkspace: 4,
    graceSeconds: 1,
    executionTimeoutSeconds: 3600,
    maxMemoryMB: 8192,
    view: toExecution,
  });
}

export type ExtraRoutes = NonNullable<PlatformDeps['extraRoutes']>;
export const registerTestJobRoutes =
  (plane: JobsPlane): ExtraRoutes =>
  (app, deps: RouteDeps) =>
    plane.register(app, deps);
