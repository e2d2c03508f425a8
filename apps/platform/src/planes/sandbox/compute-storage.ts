import {
  computeRoutes,
  scheduleRoutes,
  snapshotRoutes,
  storageRoutes,
  type RouteSpec,
} from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { DrivesService, type DriveTokenSigner } from './drives/drives.service.js';
import { registerDriveRoutes } from './drives/drives.routes.js';
import { PreviewsService } from './previews/previews.service.js';
import { registerPreviewRoutes } from './previews/previews.routes.js';
import { registerSandboxRoutes } from './records/sandboxes.routes.js';
import { registerScheduleRoutes } from './schedules/schedules.routes.js';
import { SchedulesService } from './schedules/schedules.service.js';
import { registerSnapshotRoutes } from './snapshots/snapshots.routes.js';
import { SnapshotsService, type SnapshotStorage } from './snapshots/snapshots.service.js';
import { SandboxesService, type SandboxServiceDeps } from './records/sandboxes.service.js';
import { registerVolumeRoutes } from './volumes/volumes.routes.js';
import { VolumesService } from './volumes/volumes.service.js';
import type { CollectionDeps } from '../../framework/collection.js';
import type { SandboxPool } from './pool/sandbox-pool.js';

/** Routes of the compute and storage part of the catalogue, in OpenAPI order. */
export const computeStorageRoutes: readonly RouteSpec[] = [
  ...Object.values(computeRoutes),
  ...Object.values(scheduleRoutes),
  ...Object.values(snapshotRoutes),
  ...Object.values(storageRoutes),
];

export interface ComputeStorageDeps extends CollectionDeps {
  validateImage?: (ref: string, workspace: string) => Promise<boolean>;
  /** SandboxServiceDeps.maxMemoryMB. */
  maxSandboxMemoryMB?: number;
  /** SandboxServiceDeps.watchSandbox. */
  watchSandbox?: SandboxServiceDeps['watchSandbox'];
  signDriveToken: DriveTokenSigner;
  /** SandboxServiceDeps.pool (issue 20). */
  sandboxPool?: SandboxPool | undefined;
  /** Snapshot copies on the engine (sandbox-plane.ts); absent, snapshots answer 503. */
  snapshotStorage?: SnapshotStorage;
}

/** The services of sandboxes, previews, volumes and drives over one set of dependencies. */
export function computeStorageServices(deps: ComputeStorageDeps) {
  const volumes = new VolumesService(deps);
  // Previews hang off sandboxes; a sandbox being deleted takes its previews and tokens with it.
  const late: { previews?: PreviewsService; schedules?: SchedulesService; snapshots?: SnapshotsService } = {};
  const sandboxes = new SandboxesService({
    ...deps,
    volumes,
    ...(deps.validateImage ? { validateImage: deps.validateImage } : {}),
    ...(deps.maxSandboxMemoryMB !== undefined ? { maxMemoryMB: deps.maxSandboxMemoryMB } : {}),
    ...(deps.watchSandbox ? { watchSandbox: deps.watchSandbox } : {}),
    ...(deps.sandboxPool ? { pool: deps.sandboxPool } : {}),
    onDelete: async (workspace, name) => {
      await late.previews?.removeAllOf(workspace, name);
      await late.schedules?.removeAllOf(workspace, name);
      await late.snapshots?.removeAllOf(workspace, name);
    },
  });
  const previews = (late.previews = new PreviewsService(deps, sandboxes));
  const schedules = (late.schedules = new SchedulesService(deps, sandboxes));
  const snapshots = (late.snapshots = new SnapshotsService(deps, sandboxes, deps.snapshotStorage));
  return {
    volumes,
    sandboxes,
    previews,
    schedules,
    snapshots,
    drives: new DrivesService(deps, deps.signDriveToken),
  };
}
export type ComputeStorageServices = ReturnType<typeof computeStorageServices>;

export function registerComputeStorageRoutes(
  app: Hono<ServerEnv>,
  routeDeps: RouteDeps,
  services: ComputeStorageServices,
): void {
  registerSandboxRoutes(app, routeDeps, services.sandboxes);
  registerPreviewRoutes(app, routeDeps, services.previews);
  registerScheduleRoutes(app, routeDeps, services.schedules);
  registerSnapshotRoutes(app, routeDeps, services.snapshots);
  registerVolumeRoutes(app, routeDeps, services.volumes);
  registerDriveRoutes(app, routeDeps, services.drives);
}
