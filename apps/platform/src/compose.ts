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
import { DEFAULT_HOSTS, platformHostnames, sandboxHostnames } from './framework/hosts.js';
import type { SigningKey } from './planes/identity/auth/jwt.js';
import { buildsPlane } from './planes/builds/builds-plane.js';
import { CatalogueBuildRecords } from './planes/catalogue/build-records.js';
import { createMeter } from './planes/metering/metering.js';
import { SERVED_PROVIDER_TYPES } from './planes/model-gateway/model-gateway-plane.js';
import { composeModelGateway } from './compose-model-gateway.js';
import { EgressPlane } from './planes/sandbox/egress/egress-plane.js';
import { SandboxCredentials } from './planes/sandbox/sandbox-credentials.js';
import { namespaceLegacyImages } from './planes/catalogue/images/legacy-images.js';
import { WorkspaceImages, workspaceRef } from './planes/catalogue/images/workspace-images.js';
import { withSandboxGateway } from './planes/sandbox/gateway/listener.js';
import { startSandboxPlane } from './planes/sandbox/sandbox-plane.js';
import { sharedServices } from './shared-services.js';
import { createJobsPlane } from './planes/jobs/jobs-plane.js';
import { executionOfCredential } from './planes/jobs/task-container.js';
import { jobReader } from './planes/catalogue/jobs/job-reader.js';
import { toExecution } from './planes/catalogue/jobs/job-executions.service.js';
import { gatewayAddress, SHARED_PORTS } from './planes/sandbox/egress/egress-plane.js';
import { BUILD_PROXY_PORTS, BuildEgress } from './planes/sandbox/egress/build-egress.js';
import { LeafCertificates } from './planes/sandbox/egress/certificate-authority.js';
import { overrideLookup, type Lookup } from './framework/destinations/destination-guard.js';
import { lookup as dnsLookup } from 'node:dns';
import { join } from 'node:path';
import { PLATFORM_VERSION } from './version.js';
import { createRunPlane } from './planes/run/run-plane.js';
import { recordOfReplicaCredential } from './planes/run/replica-container.js';
import { runRecords } from './planes/catalogue/workloads/run-records.js';
import { SandboxProxy } from './planes/sandbox/gateway/proxy.js';

/** What main.ts opened: the process's config, store, keys and files. */
export interface OpenedResources {
  config: PlatformConfig;
  store: Store;
  logger: Logger;
  layout: HomeLayout;
  signingKey: SigningKey;
  cursorSecret: Uint8Array;
  secretKey: Uint8Array;
  /** The extra trusted CAs, one PEM certificate each (TARMAC_EXTRA_CA_CERTS), read by main.ts. */
  extraCaPem: string[];
  /** PEM text of TARMAC_EGRESS_EXTRA_CA (tests): trusted by the egress proxy alone. */
  proxyOnlyCa: string[];
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
  /**
   * The extra trusted CAs as one PEM bundle (issue 14 item 10), for the builds plane's
   * constructor (`trustedCaPem`): a build's `npm ci`/`pip install` behind a TLS-inspecting proxy
   * needs them as much as a sandbox does. Empty when there are none.
   */
  trustedCaPem: string;
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
    // Issue 14 item 10: upstream TLS the proxy terminates, and every sandbox's trust stores.
    extraCaPem: r.extraCaPem,
    extraUpstreamCa: [...r.extraCaPem, ...r.proxyOnlyCa],
    log: (event) => logger.debug(event, 'egress'),
    now: new Date(),
  });
  // Builds' own proxy (build-egress.ts) listens on the gateway too, on ports of its own range.
  const buildsEgress = config.builds.network === 'egress';
  engineConfig.network.allowedHostPorts = [...egress.ports, ...(buildsEgress ? BUILD_PROXY_PORTS : [])];

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
    // Host/Origin sandboxd's /mcp accepts (issue 14 item 7): this sandbox's hosts, the platform's.
    mcpHosts: (s) => {
      const hosts = { ...DEFAULT_HOSTS, ...config.hosts };
      const own = platformHostnames(config.publicUrl, config.host, hosts.domain);
      return sandboxHostnames(hosts, s.workspace, s.name, own);
    },
    // Images belong to a workspace (issue 19 item 2): the catalogue's records, the sandbox's runs.
    images: {
      importTarget: (workspace, ref) => workspaceImages.importTarget(workspace, ref),
      resolve: (workspace, ref) => workspaceImages.resolve(workspace, ref),
      displayRef: workspaceRef,
      adoptLegacy: (engineImages) => namespaceLegacyImages(engineImages, store, logger),
    },
  });
  // Jobs (planes/jobs/ARCHITECTURE.md): task containers on the sandbox engine, with a sandbox's
  // egress defaults and per-workspace images; job records come from the catalogue.
  const jobs = createJobsPlane({
    store,
    engine: sandboxPlane.engine,
    jobs: jobReader(store, shared.secrets),
    setup: {
      defaults: (credentialId) => egress.sandboxDefaults({ id: credentialId }),
      resolveImage: (workspace, ref) => workspaceImages.resolve(workspace, ref),
    },
    sealer: shared.secrets,
    dataKey: r.secretKey,
    home: config.home,
    logger,
    capacityPerWorkspace: config.jobs.capacityPerWorkspace,
    graceSeconds: config.jobs.graceSeconds,
    executionTimeoutSeconds: config.jobs.executionTimeoutSeconds,
    maxMemoryMB: sandboxPlane.memoryCapacityMB,
    view: toExecution,
  });
  // The run plane (planes/run/ARCHITECTURE.md): agent and function replicas on the sandbox engine,
  // with a sandbox's egress defaults and per-workspace images; records from the catalogue; the
  // sandbox gateway's byte-for-byte proxy in front of them.
  // Up to 64 idle connections per replica: a burst of concurrent requests reuses them.
  const replicaProxy = new SandboxProxy({ maxFreeSockets: 64, upstreamName: 'replica' });
  const platformDomain = { ...DEFAULT_HOSTS, ...config.hosts }.domain;
  const run = createRunPlane({
    catalogue: runRecords({
      store,
      feed: shared.changeFeed,
      now: () => new Date(),
      secrets: shared.secrets,
      hosts: { ...DEFAULT_HOSTS, ...config.hosts },
      apiUrl: r.apiUrl,
    }),
    engine: sandboxPlane.engine,
    setup: {
      defaults: (credentialId) => egress.sandboxDefaults({ id: credentialId }),
      resolveImage: (workspace, ref) => workspaceImages.resolve(workspace, ref),
    },
    forwarder: replicaProxy,
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    changes: shared.changeFeed,
    home: config.home,
    logger,
    ...config.run, // readyTimeoutMs, holdMs, async, idle windows, start-up CPU (config/workloads.ts)
    maxHeld: 1000,
    domain: platformDomain,
    platformHostnames: platformHostnames(config.publicUrl, config.host, platformDomain),
    selfPort: r.boundPort,
    idle: { standbyAfterMs: config.run.standbyAfterMs, stopAfterMs: config.run.stopAfterMs },
    autoscale: { ...config.run.autoscale, hostMemoryMB: sandboxPlane.memoryCapacityMB }, // host-bounded
  });
  await egress.start({
    ensureBridge: () => sandboxPlane.ensureBridge(),
    // Running job tasks use the proxy like sandboxes: their own credentials, checked against
    // their address; their policy is a sandbox's without network settings.
    live: {
      all: () => [
        ...sandboxPlane.controllers.live.all(),
        ...jobs.liveTasks(),
        ...run.controller.liveReplicas(),
      ],
    },
    lookupLive: (id) =>
      recordOfReplicaCredential(id) ? run.controller.findLive(id) : jobs.runner.findLiveTask(id),
    resources: {
      getById: async (id) => {
        // Task and replica identities: their policy is a sandbox's without network settings.
        const execution = executionOfCredential(id) ?? recordOfReplicaCredential(id);
        if (!execution) return store.resources.getById(id);
        const row = await store.resources.getById(execution);
        return row && { ...row, spec: {}, system: {} };
      },
      update: (id, patch, expectedRevision) => store.resources.update(id, patch, expectedRevision),
    },
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
  // Build steps reach the public internet through a proxy of their own, from a namespace on the
  // sandbox bridge (build-egress.ts); `none`/`host` are the operator's other choices.
  const subnet = engineConfig.network.subnet ?? DEFAULT_NETWORK.subnet;
  const buildEgress = new BuildEgress({
    network: {
      attach: (id) => engine.network.attach(id),
      detach: (id, ip) => engine.network.detach(id, ip),
    },
    subnet,
    gateway: gatewayAddress(subnet),
    allowCidrs: config.egress.allowCidrs,
    lookup: overrideLookup(config.egress.resolve, dnsLookup as unknown as Lookup),
    extraUpstreamCa: [...r.extraCaPem, ...r.proxyOnlyCa],
    leafCertificates: new LeafCertificates(egress.ca.ca),
    stateDir: join(r.layout.root, 'egress', 'build-netns'),
    log: (event) => logger.debug(event, 'build egress'),
    bound: (server) => {
      ConnectionGuard.applyTimeouts(server, r.connections.httpTimeouts);
      r.connections.egressGuard.guard(server);
    },
  });
  if (buildsEgress) {
    // Not fatal: the platform serves everything else; each build then fails saying why.
    await buildEgress.start().catch((err: unknown) => logger.error({ err }, 'the build proxy did not start'));
  } else await buildEgress.removeLeftovers();
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
    // Layers an import used lately stay: another platform sharing the image store may be about to
    // commit an image naming them (TARMAC_BUILD_LAYER_GC_GRACE_SECONDS).
    pruneLayers: () => engine.images.pruneLayers(config.builds.layerGcGraceMs),
    changes: shared.changeFeed,
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    logger,
    apiUrl: r.apiUrl,
    trustedCaPem: r.extraCaPem.join(''),
    egress: buildEgress,
    limits: config.builds,
  });

  const app = buildApp(
    {
      earlyRoutes: (a) => builds.registerRoutes(a),
      validateImage: (ref, workspace) => sandboxPlane.validateImage(ref, workspace),
      // A sandbox asking more memory than the engine can ever commit is a 400 (issue 19 item 13).
      maxSandboxMemoryMB: sandboxPlane.memoryCapacityMB,
      sandboxPool: sandboxPlane.pool,
      // Snapshots and forks copy a live sandbox's files through the engine (issue 14 item 6).
      snapshotStorage: sandboxPlane.snapshots,
      // A re-create of a name being deleted waits for the teardown (issue 14 item 2).
      watchSandbox: (workspace, name) => sandboxPlane.watchSandbox(workspace, name),
      store,
      logger,
      signingKey: r.signingKey,
      cursorSecret: r.cursorSecret,
      hosts: { port: r.boundPort, ...config.hosts },
      apiUrl: r.apiUrl,
      version: PLATFORM_VERSION,
      prices: config.metering.prices,
      servedModelTypes: SERVED_PROVIDER_TYPES,
      modelCallRetentionDays: config.models.callRetentionDays,
      // Executions end, the meter charges them to their end, then they go with the job (issue 17).
      beforeJobDelete: (workspace, job) => jobs.executions.retire(workspace, job, () => meter.pass()),
      extraRoutes: (app, routeDeps) => {
        jobs.register(app, routeDeps);
        run.register(app, routeDeps);
      },
    },
    shared,
  );
  // BL_EXECUTION_DATA_URL on the bridge gateway, on a port every sandbox firewall opens (the
  // proxy's shared range, taken from the top; the proxy takes it from the bottom).
  await jobs.start(
    gatewayAddress(engineConfig.network.subnet ?? DEFAULT_NETWORK.subnet),
    [...SHARED_PORTS].reverse(),
  );

  await run.start();

  // The model gateway (issue 18; compose-model-gateway.ts).
  const modelGateway = composeModelGateway({ store, shared, config, logger, selfPort: r.boundPort });

  // Metering (planes/metering/ARCHITECTURE.md): the meter listens to the same change feed.
  const meter = createMeter(store, logger, Date.now, run.usage);
  meter.start(config.metering.intervalMs, shared.changeFeed);

  return {
    app,
    createServer: withSandboxGateway(
      () => sandboxPlane.gateway,
      // One list for the process, not one per request (the listener reads it on every request).
      once(() => [
        run.hostRoute,
        ...sandboxPlane.rawRoutes,
        modelGateway.route,
        run.route,
        ...builds.rawRoutes,
      ]),
      () => sandboxPlane.previews,
      {
        guard: r.connections.publicGuard,
        timeouts: r.connections.httpTimeouts,
        onRequest: (req, res) => sandboxPlane.sessions.request(req, res),
        onUpgrade: (req, socket) => sandboxPlane.sessions.upgrade(req, socket),
      },
    ),
    egressUrl: () => egress.url(),
    trustedCaPem: r.extraCaPem.join(''),
    closers: [
      // Task containers keep running too (a restart re-attaches them); the runner and cron stop.
      { name: 'jobs', close: () => jobs.stop() },
      // Replicas keep running too (a restart re-attaches them without a new container).
      { name: 'run', close: async () => (await run.stop(), replicaProxy.close()) },
      // Sandboxes keep running (restart safety); only the controllers' loops stop.
      { name: 'sandboxes', close: () => sandboxPlane.stop() },
      { name: 'egress', close: () => egress.close() },
      // Writes the usage still queued before the store closes.
      { name: 'model-gateway', close: () => modelGateway.close() },
      { name: 'builds', close: () => builds.close() },
      // After the builds: their namespaces go once buildah has stopped.
      { name: 'build-egress', close: () => buildEgress.close() },
      // Closes every open usage interval before the store goes away.
      { name: 'metering', close: () => meter.stop() },
    ],
  };
}

/** `make()`'s value, made on the first call (after every plane exists) and kept. */
function once<T>(make: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
}
