/**
 * The composition step of the composition root (issue 13): main.ts opens the files, the store and
 * the listener and reads the one validated config; this builds each shared service once and wires
 * the planes to one another through the interfaces they declare. It is the only place that
 * constructs a plane or hands one plane's service to another (apps/platform/ARCHITECTURE.md).
 */
import { BASE_IMAGE, DEFAULT_NETWORK, ProcessRunner } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { PlatformConfig } from './config.js';
import type { HomeLayout } from './home/home-files.js';
import { ConnectionGuard, type HttpTimeouts } from './framework/connection-guard.js';
import type { SigningKey } from './planes/identity/auth/jwt.js';
import { DEFAULT_HOSTS } from './framework/hosts.js';
import { buildsPlane } from './planes/builds/builds-plane.js';
import { CatalogueBuildRecords } from './planes/catalogue/build-records.js';
import { createMeter } from './planes/metering/metering.js';
import { EgressPlane } from './planes/sandbox/egress/egress-plane.js';
import { SandboxCredentials } from './planes/sandbox/sandbox-credentials.js';
import { namespaceLegacyImages } from './planes/catalogue/images/legacy-images.js';
import { WorkspaceImages, workspaceRef } from './planes/catalogue/images/workspace-images.js';
import { withSandboxGateway } from './planes/sandbox/gateway/listener.js';
import { startSandboxPlane } from './planes/sandbox/sandbox-plane.js';
import { sharedServices } from './shared-services.js';
import { PLATFORM_VERSION } from './version.js';

/** What main.ts opened: the process's config, store, keys and files. */
export interface OpenedResources {
  config: PlatformConfig;
  store: Store;
  logger: Logger;
  layout: HomeLayout;
  signingKey: SigningKey;
  cursorSecret: Uint8Array;
  secretKey: Uint8Array;
  /** PEM text of TARMAC_EGRESS_EXTRA_CA (tests), read by main.ts. */
  extraUpstreamCa: string[];
  /** CAs trusted inside image builds (issue 15), PEM; read by main.ts. */
  trustedCaPem: string;
  /** Absolute path of the sandboxd bundle and the node binary sandboxd runs on. */
  sandboxdBundle: string;
  nodeBinary: string;
  /** Known once the listener is bound (port 0 picks one); read lazily by URL builders. */
  apiUrl: () => string;
  boundPort: () => number | undefined;
  /** Connection caps and HTTP timeouts of the public listener and the egress proxy (issue 19 item 7). */
  connections: { publicGuard: ConnectionGuard; egressGuard: ConnectionGuard; httpTimeouts: HttpTimeouts };
}

export interface ComposedPlatform {
  /** The management app (Hono) and the listener factory routing sandbox and preview hosts. */
  app: ReturnType<typeof buildApp>;
  createServer: ReturnType<typeof withSandboxGateway>;
  egressUrl: () => Promise<string>;
  /** In shutdown order, after the HTTP listener and before the store. */
  closers: Array<{ name: string; close: () => Promise<void> }>;
}

export async function composePlatform(r: OpenedResources): Promise<ComposedPlatform> {
  const { config, store, logger } = r;
  const shared = sharedServices({ store, signingKey: r.signingKey, secretKey: r.secretKey });

  // Egress (planes/sandbox/egress/ARCHITECTURE.md): the proxy on the bridge gateway is the
  // sandboxes' only way out. Prepared before the sandbox plane, started after it (egress-plane.ts).
  const engineConfig = { ...config.engine, network: { ...config.engine.network } };
  // Per-sandbox secrets: sandboxd's gateway token and the egress proxy password (issue 19 item 3).
  const sandboxCredentials = new SandboxCredentials(r.secretKey);
  const workspaceImages = new WorkspaceImages(store);
  const egress = await EgressPlane.prepare({
    credentials: sandboxCredentials,
    allowCidrs: config.egress.allowCidrs,
    home: r.layout,
    subnet: engineConfig.network.subnet ?? DEFAULT_NETWORK.subnet,
    port: config.egress.port,
    resolve: config.egress.resolve,
    extraUpstreamCa: r.extraUpstreamCa,
    log: (event) => logger.debug(event, 'egress'),
    now: new Date(),
  });
  engineConfig.network.allowedHostPorts = egress.ports;

  // The sandbox plane (issue 4): engine, controllers, sandbox and preview gateways; they share one
  // ChangeFeed with the API's services.
  const sandboxPlane = await startSandboxPlane({
    sandboxDefaults: egress.sandboxDefaults,
    gatewayIntercept: egress.intercept,
    home: config.home,
    config: engineConfig,
    sandboxdBundle: r.sandboxdBundle,
    nodeBinary: r.nodeBinary,
    store,
    changes: shared.changeFeed,
    logger,
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    secrets: shared.secrets,
    credentials: sandboxCredentials,
    // Images belong to a workspace (issue 19 item 2): the catalogue's records, the sandbox's runs.
    images: {
      importTarget: (workspace, ref) => workspaceImages.importTarget(workspace, ref),
      resolve: (workspace, ref) => workspaceImages.resolve(workspace, ref),
      displayRef: workspaceRef,
      adoptLegacy: (engineImages) => namespaceLegacyImages(engineImages, store, logger),
    },
  });
  await egress.start({
    ensureBridge: () => sandboxPlane.ensureBridge(),
    live: sandboxPlane.controllers.live,
    resources: store.resources,
    secrets: shared.secrets,
    changes: shared.changeFeed,
    runner: new ProcessRunner(),
    netnsOf: (engineId) => sandboxPlane.netnsOf(engineId),
    ready: sandboxPlane.controllers.ready,
    bound: (server) => {
      ConnectionGuard.applyTimeouts(server, r.connections.httpTimeouts);
      r.connections.egressGuard.guard(server);
    },
  });

  // Builds (issue 15, planes/builds): records through the catalogue, images into the engine's store.
  const engine = sandboxPlane.engine;
  const builds = buildsPlane({
    home: config.home,
    secretKey: r.secretKey,
    records: new CatalogueBuildRecords({
      store,
      feed: shared.changeFeed,
      now: () => new Date(),
      secrets: shared.secrets,
      hosts: { ...DEFAULT_HOSTS, ...config.hosts },
      apiUrl: r.apiUrl,
    }),
    images: {
      importTarget: (workspace, ref) => workspaceImages.importTarget(workspace, ref),
      importImage: (archive, engineRef) => engine.importImage(archive, engineRef),
      baseImage: async () => {
        const info = await engine.ensureImage(BASE_IMAGE);
        const base = engine.images.resolve(BASE_IMAGE);
        const rootfs = base.layerDirs[0];
        if (base.layerDirs.length !== 1 || !rootfs) throw new Error('the base image is not one layer');
        return {
          name: BASE_IMAGE,
          rootfs,
          env: base.env,
          workingDir: base.workingDir,
          version: info.createdAt,
        };
      },
    },
    removeImage: (engineRef) => engine.images.remove(engineRef),
    changes: shared.changeFeed,
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    logger,
    apiUrl: r.apiUrl,
    trustedCaPem: r.trustedCaPem,
    limits: config.builds,
  });

  const app = buildApp(
    {
      extraRoutes: (a) => builds.registerRoutes(a),
      validateImage: (ref, workspace) => sandboxPlane.validateImage(ref, workspace),
      // A sandbox asking more memory than the engine can ever commit is a 400 (issue 19 item 13).
      maxSandboxMemoryMB: sandboxPlane.memoryCapacityMB,
      store,
      logger,
      signingKey: r.signingKey,
      cursorSecret: r.cursorSecret,
      hosts: { port: r.boundPort, ...config.hosts },
      apiUrl: r.apiUrl,
      version: PLATFORM_VERSION,
      prices: config.metering.prices,
    },
    shared,
  );

  // Metering (planes/metering/ARCHITECTURE.md): the meter listens to the same change feed.
  const meter = createMeter(store, logger);
  meter.start(config.metering.intervalMs, shared.changeFeed);

  return {
    app,
    createServer: withSandboxGateway(
      () => sandboxPlane.gateway,
      () => [...sandboxPlane.rawRoutes, ...builds.rawRoutes],
      () => sandboxPlane.previews,
      {
        guard: r.connections.publicGuard,
        timeouts: r.connections.httpTimeouts,
        onRequest: (req, res) => sandboxPlane.sessions.request(req, res),
        onUpgrade: (req, socket) => sandboxPlane.sessions.upgrade(req, socket),
      },
    ),
    egressUrl: () => egress.url(),
    closers: [
      // Sandboxes keep running (restart safety); only the controllers' loops stop.
      { name: 'sandboxes', close: () => sandboxPlane.stop() },
      { name: 'egress', close: () => egress.close() },
      { name: 'builds', close: () => builds.close() },
      // Closes every open usage interval before the store goes away.
      { name: 'metering', close: () => meter.stop() },
    ],
  };
}
