import { computeRoutes, storageRoutes, type RouteSpec } from '@tarmac/contract';
import type { RouteDeps, ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { DrivesService, type DriveTokenSigner } from './drives/drives.service.js';
import { registerDriveRoutes } from './drives/drives.routes.js';
import { PreviewsService } from './previews/previews.service.js';
import { registerPreviewRoutes } from './previews/previews.routes.js';
import { registerSandboxRoutes } from './records/sandboxes.routes.js';
import { SandboxesService, type SandboxServiceDeps } from './records/sandboxes.service.js';
import { registerVolumeRoutes } from './volumes/volumes.routes.js';
import { VolumesService } from './volumes/volumes.service.js';
import type { CollectionDeps } from '../../framework/collection.js';

/** Routes of the compute and storage part of the catalogue, in OpenAPI order. */
export const computeStorageRoutes: readonly RouteSpec[] = [
  ...Object.values(computeRoutes),
  ...Object.values(storageRoutes),
];

export interface ComputeStorageDeps extends CollectionDeps {
  validateImage?: (ref: string, workspace: string) => Promise<boolean>;
  /** SandboxServiceDeps.maxMemoryMB. */
  maxSandboxMemoryMB?: number;
  /** SandboxServiceDeps.watchSandbox. */
  watchSandbox?: SandboxServiceDeps['watchSandbox'];
  signDriveToken: DriveTokenSigner;
}

/** The services of sandboxes, previews, volumes and drives over one set of dependencies. */
export function computeStorageServices(deps: ComputeStorageDeps) {
  const volumes = new VolumesService(deps);
  // Previews hang off sandboxes; a sandbox being deleted takes its previews and tokens with it.
  const late: { previews?: PreviewsService } = {};
  const sandboxes = new SandboxesService({
    ...deps,
    volumes,
    ...(deps.validateImage ? { validateImage: deps.validateImage } : {}),
    ...(deps.maxSandboxMemoryMB !== undefined ? { maxMemoryMB: deps.maxSandboxMemoryMB } : {}),
    ...(deps.watchSandbox ? { watchSandbox: deps.watchSandbox } : {}),
    onDelete: (workspace, name) => late.previews?.removeAllOf(workspace, name) ?? Promise.resolve(),
  });
  const previews = (late.previews = new PreviewsService(deps, sandboxes));
  return {
    volumes,
    sandboxes,
    previews,
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
  registerVolumeRoutes(app, routeDeps, services.volumes);
  registerDriveRoutes(app, routeDeps, services.drives);
}
