import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Authenticator, ServerEnv, WorkspaceResolver } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ChangeFeed } from '../../framework/change-feed.js';
import { Buildah } from './buildah.js';
import type { BuildNetworkMode, BuildNetworkProvider } from './build-network.js';
import type { BuildImageStore, BuildRecords, BuildTarget } from './build-records.js';
import { registerBuildRoutes } from './builds.routes.js';
import { BuildsService } from './builds.service.js';
import { ImageGc } from './image-gc.js';
import { LayerExport } from './layer-export.js';
import { uploadRoute } from './upload-route.js';
import { UploadTickets } from './upload-tickets.js';

/** The builds plane (issue 15), built once by compose.ts from what other planes hand in. */
export interface BuildsPlaneDeps {
  home: string;
  secretKey: Uint8Array;
  records: BuildRecords;
  images: BuildImageStore;
  /** Removes an image from the engine's store (the GC). */
  removeImage(engineRef: string): void;
  /** Removes the engine store's layers no image names any more (the GC, after each pass). */
  pruneLayers(): number;
  changes: ChangeFeed;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  logger: Logger;
  apiUrl: () => string;
  /** CAs trusted inside build steps besides the base image's (operator CA, inspecting proxies). */
  trustedCaPem: string;
  /** The namespace and proxy of each build under `network: 'egress'` (build-network.ts). */
  egress?: BuildNetworkProvider;
  limits: {
    maxUploadBytes: number;
    maxSourceBytes: number;
    urlTtlMs: number;
    memoryMB: number;
    timeoutMs: number;
    network: BuildNetworkMode;
    gcIntervalMs: number;
    /** The builder's layer cache (builder-cache.ts): dangling images older than this go… */
    cacheMaxAgeMs: number;
    /** …and all of them when its storage is larger than this. */
    cacheMaxBytes: number;
  };
}

export function buildsPlane(d: BuildsPlaneDeps) {
  const dir = join(d.home, 'builds');
  const builder = new Buildah({
    root: join(dir, 'storage'),
    runroot: join(dir, 'run'),
    isolation: 'oci',
    network: d.limits.network,
    ...(d.egress ? { egress: d.egress } : {}),
    memoryMB: d.limits.memoryMB,
    timeoutMs: d.limits.timeoutMs,
    trustedCaPem: d.trustedCaPem,
  });
  mkdirSync(dir, { recursive: true });
  // The cache of earlier versions (gzipped blobs named by diff ID, layer-export.ts): unusable now.
  rmSync(join(dir, 'layer-cache'), { recursive: true, force: true });
  const gc = new ImageGc({
    ledgerFile: join(dir, 'built-images.json'),
    tagExists: (e) => d.records.tagExists(e.workspace, e.imageType, e.name, e.tag),
    removeImage: (ref) => d.removeImage(ref),
    pruneLayers: () => d.pruneLayers(),
    pruneBuilderCache: () =>
      builder.pruneCache({ maxAgeMs: d.limits.cacheMaxAgeMs, maxBytes: d.limits.cacheMaxBytes }, Date.now()),
    log: (msg, extra) => d.logger.info(extra, msg),
  });
  gc.start(d.limits.gcIntervalMs);
  const builds = new BuildsService({
    onStored: (entry) => gc.record(entry),
    records: d.records,
    images: d.images,
    builder,
    layerExport: new LayerExport(join(dir, 'layer-blobs')),
    tickets: new UploadTickets(d.secretKey, d.limits.urlTtlMs),
    workDir: join(dir, 'work'),
    limits: {
      maxUploadBytes: d.limits.maxUploadBytes,
      maxBytes: d.limits.maxSourceBytes,
      maxEntries: 100_000,
    },
    apiUrl: d.apiUrl,
    log: (msg, extra) => d.logger.warn(extra ?? {}, msg),
  });
  // Builds survive a restart (build-recovery.ts): a dead run's processes go, then interrupted
  // builds resume and records left waiting with nothing to resume are FAILED.
  const recovered = builds
    .recover(async () => {
      const killed = await builder.reapOrphans();
      if (killed.length > 0) d.logger.warn({ killed }, 'removed what builds of an earlier run left running');
    })
    .then(
      (r) =>
        r.resumed + r.failed > 0 ? d.logger.info(r, 'builds of the last run resumed or failed') : undefined,
      (err: unknown) => d.logger.error({ err }, 'interrupted builds not recovered'),
    );
  // Deleting the record cancels its build (issue 15): the change feed says which record moved.
  const kinds: Array<[string, BuildTarget['kind']]> = [
    ['agent', 'agent'],
    ['function', 'function'],
    ['job', 'job'],
    ['application', 'application'],
  ];
  const unsubscribe = kinds.map(([kind, k]) =>
    d.changes.subscribe(kind, (ref) => {
      const imageType = `${k}s` as BuildTarget['imageType'];
      void builds.cancelIfGone(ref.workspace, { kind: k, imageType, name: ref.name }).catch(() => undefined);
    }),
  );
  return {
    builds,
    rawRoutes: [uploadRoute(builds, d.logger)],
    registerRoutes: (app: Hono<ServerEnv>) =>
      registerBuildRoutes(app, { builds, authenticator: d.authenticator, workspaces: d.workspaces }),
    gc,
    recovered,
    close: async () => {
      await recovered;
      gc.stop();
      unsubscribe.forEach((u) => u());
      await builds.stop();
      await builder.shutdown();
    },
  };
}
