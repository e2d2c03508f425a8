/**
 * The sandbox plane's runtime half, built by the composition root (compose.ts): the local engine,
 * the sandbox/volume controllers and the gateway in front of sandboxd. Takes everything it needs
 * as arguments, including the shared services compose.ts builds once (authenticator, workspace
 * resolver, secret box, change feed); it constructs nothing of another plane.
 */
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { SandboxSpec } from '@tarmac/contract';
import { ImageNotFoundError, LocalEngine } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Authenticator, WorkspaceResolver } from '@tarmac/server-kit';
import type { Logger } from 'pino';
import {
  sandboxdKeepAlive,
  startControllers,
  type ControllerDeps,
  type Controllers,
} from './controllers/controllers.js';
import type { EngineConfig } from './controllers/engine-config.js';
import { released } from './controllers/live-sandboxes.js';
import type { SandboxRow } from './records/sandbox-record.js';
import { sandboxSecretContext, viewSandboxSpec } from './records/sandbox-secrets.js';
import type { SecretBox } from '../../framework/secrets.js';
import type { ChangeFeed } from '../../framework/change-feed.js';
import { imageImportApp } from './gateway/image-import.js';
import type { SandboxImages } from './sandbox-images.js';
import { AccessCache, ACCESS_CACHE_TTL_MS, ACCESS_REFRESH_WINDOW_MS } from '../../framework/access-cache.js';
import { OpenSessions } from './gateway/open-sessions.js';
import { PreviewGateway } from './previews/preview-gateway.js';
import type { RawRoute } from './gateway/listener.js';
import { SandboxGateway, type SandboxGatewayDeps } from './gateway/sandbox-gateway.js';
import { sandboxdAgent } from './gateway/proxy.js';
import { WarmPool, type PoolShapeStatus } from './pool/warm-pool.js';
import { sandboxPool, type SandboxPool } from './pool/sandbox-pool.js';
import {
  SANDBOXD_MCP_HOSTS_ENV,
  SANDBOXD_TOKEN_ENV,
  SANDBOXD_TOKEN_HEADER,
  type SandboxCredentials,
} from './sandbox-credentials.js';
import { ScheduleRunner } from './schedules/schedule-runner.js';
import type { SnapshotStorage } from './snapshots/snapshots.service.js';
import { SANDBOX_SNAPSHOT_KIND } from '../../framework/kinds.js';
import { WORKSPACE_KIND } from '../../framework/workspace-deletion.js';
import { StartWaiters, type StartWaiter } from './gateway/start-waiters.js';
import { SANDBOX_KIND } from './records/sandbox-record.js';

export interface SandboxPlaneDeps {
  home: string;
  config: EngineConfig;
  /** Absolute path of the sandboxd bundle (main.ts resolves the default). */
  sandboxdBundle: string;
  nodeBinary: string;
  store: Store;
  changes: ChangeFeed;
  logger: Logger;
  /** The management API's bearer authenticator and workspace resolver (one of each per process). */
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  /** The resources' SecretBox (keys/secrets.key): secret envs are opened at start. */
  secrets: SecretBox;
  /** Egress env vars and CA files every sandbox gets (egress/sandbox-setup.ts). */
  sandboxDefaults?: ControllerDeps['sandboxDefaults'];
  /** Sandbox API routes the platform answers itself (SandboxGatewayDeps.intercept). */
  gatewayIntercept?: SandboxGatewayDeps['intercept'];
  /** Per-sandbox secrets (sandbox-credentials.ts): sandboxd's token goes in its env and on requests. */
  credentials: SandboxCredentials;
  /**
   * Hostnames sandboxd's /mcp accepts in Host and Origin besides loopback (issue 14 item 7, DNS
   * rebinding): the sandbox's own hosts and the platform's (compose.ts builds them).
   */
  mcpHosts?: (sandbox: { workspace: string; name: string }) => string[];
  /** Workspace images (the catalogue's, through compose.ts): which engine ref a workspace may run. */
  images: SandboxImages;
}

export interface SandboxPlane {
  engine: LocalEngine;
  /** For egress: creates the sandbox bridge, and names a sandbox's network namespace. */
  ensureBridge(): Promise<void>;
  netnsOf(engineId: string): string;
  /** Most memory (MB) the engine commits to sandboxes in total (host memory x overcommit). */
  memoryCapacityMB: number;
  controllers: Controllers;
  gateway: SandboxGateway;
  /** Serves preview hosts (previews/preview-gateway.ts). */
  previews: PreviewGateway;
  /** Open credentialed requests and upgrades, closed on revocation/expiry (listener hooks). */
  sessions: OpenSessions;
  /** Raw-body management routes served at the listener (POST /v0/images/import). */
  rawRoutes: RawRoute[];
  /** The warm pool for the sandboxes module (issue 20); absent when TARMAC_POOL is off. */
  pool: SandboxPool | undefined;
  /** The pool per shape and the host memory of its members (ops). */
  poolStatus(): Promise<PoolShapeStatus[]>;
  /** Filesystem snapshots of live sandboxes (snapshots/snapshots.service.ts SnapshotStorage). */
  snapshots: SnapshotStorage;
  /** Notices about one sandbox from its controller (a re-create waits out a delete with it). */
  watchSandbox(workspace: string, name: string): StartWaiter;
  /** For the sandboxes module: false for an image the workspace cannot run (400 INVALID_IMAGE). */
  validateImage(ref: string, workspace: string): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startSandboxPlane(d: SandboxPlaneDeps): Promise<SandboxPlane> {
  const engine = new LocalEngine({
    home: d.home,
    ...(d.config.imageDir ? { imageDir: d.config.imageDir } : {}),
    network: d.config.network,
    ...(d.config.maxImageArchiveBytes
      ? { importLimits: { maxArchiveBytes: d.config.maxImageArchiveBytes } }
      : {}),
    runtime: { nodeBinary: d.nodeBinary, tiniBinary: d.config.tiniBinary, sandboxdBundle: d.sandboxdBundle },
    ...d.config.limits,
  });
  // Images are per workspace (issue 19 item 2). Before the controllers start, images of an older
  // layout move into their workspace's namespace; a store shared by several homes is not ours to sort.
  if (!d.config.imageDir) await d.images.adoptLegacy(engine.images);
  const box = d.secrets;
  const token = (entry: { id: string }) => d.credentials.sandboxdToken(entry.id);
  // The standby check reads keepAlive from sandboxd's /health, which only the token unlocks.
  const keepAliveCount = (ip: string, recordId: string) =>
    sandboxdKeepAlive(ip, { [SANDBOXD_TOKEN_HEADER]: token({ id: recordId }) });
  const sandboxDefaults = async (sandbox: { id: string; workspace: string; name: string }) => {
    const base = await d.sandboxDefaults?.(sandbox);
    const mcpHosts = d.mcpHosts?.(sandbox) ?? [];
    return {
      env: {
        ...base?.env,
        [SANDBOXD_TOKEN_ENV]: token(sandbox),
        ...(mcpHosts.length > 0 ? { [SANDBOXD_MCP_HOSTS_ENV]: mcpHosts.join(',') } : {}),
      },
      files: base?.files ?? [],
    };
  };
  const agent = sandboxdAgent();
  // The warm pool (issue 20, pool/ARCHITECTURE.md): booted once the controllers have re-attached.
  const warm =
    d.config.pool.length > 0
      ? new WarmPool({
          engine,
          shapes: d.config.pool,
          hot: d.config.poolHot ?? true,
          ...(d.config.standbyMinAgeMs !== undefined ? { minAgeMs: d.config.standbyMinAgeMs } : {}),
          // Built-in images resolve the same in every workspace; the pool boots only those it can.
          resolveImage: (ref) => d.images.resolve('', ref),
          sandboxDefaults,
          token: (id) => token({ id }),
          tokenHeader: SANDBOXD_TOKEN_HEADER,
          agent,
          logger: d.logger,
        })
      : undefined;
  // Requests to a sandbox still starting wait for the controller's word (issue 14 item 1).
  const starts = new StartWaiters(d.config.startWait?.maxHeld ?? 1000);
  const unsubscribeStarts = d.changes.subscribe(SANDBOX_KIND, (ref) =>
    starts.notify(ref.workspace, ref.name),
  );
  const controllers = startControllers({
    ...(warm ? { isPooled: (id: string) => warm.owns(id), makeRoom: (mb: number) => warm.release(mb) } : {}),
    onRecord: (row) => starts.notify(row.workspace, row.name),
    engine,
    store: d.store,
    changes: d.changes,
    logger: d.logger,
    standbyAfterMs: d.config.standbyAfterMs,
    standbyMinAgeMs: d.config.standbyMinAgeMs,
    sandboxDefaults,
    keepAliveCount,
    orphanGraceMs: d.config.orphanGraceMs,
    resolveImage: (workspace, ref) => d.images.resolve(workspace, ref),
    revealEnvs: (row: SandboxRow) =>
      viewSandboxSpec(box, row.spec as SandboxSpec, sandboxSecretContext(row.workspace, row.name), 'reveal')
        .runtime?.envs ?? [],
  });
  void controllers.ready
    .then(() => warm?.start())
    .catch((err: unknown) => d.logger.error({ err }, 'the warm pool did not start'));
  const pool = warm
    ? sandboxPool({
        pool: warm,
        resolveImage: (workspace, ref) => d.images.resolve(workspace, ref),
        adopt: (row, ip, bootedMs) => controllers.sandboxes.adopt(row, ip, bootedMs),
        ...(d.mcpHosts ? { mcpHosts: d.mcpHosts } : {}),
      })
    : undefined;
  const { authenticator, workspaces } = d;
  // Issue 19 item 10: revocations empty the cache at once and close the sessions they end.
  // Issue 20 item 2: entries in use are re-validated in the background, not on the request path.
  const access = new AccessCache(
    authenticator,
    workspaces,
    Date.now,
    ACCESS_CACHE_TTL_MS,
    10_000,
    d.changes,
    {
      windowMs: ACCESS_REFRESH_WINDOW_MS,
      maxRefreshed: 1024,
    },
  );
  access.startRefresh();
  const gateway = new SandboxGateway({
    access,
    live: controllers.live,
    touch: (entry) => controllers.standby.touch(entry),
    authenticator,
    workspaces,
    store: d.store,
    logger: d.logger,
    ready: controllers.ready,
    domain: d.config.sandboxDomain,
    sandboxdToken: token,
    starts,
    agent,
    ...(d.config.startWait ? { startWaitMs: d.config.startWait.timeoutMs } : {}),
    ...(d.gatewayIntercept ? { intercept: d.gatewayIntercept } : {}),
  });
  const previews = new PreviewGateway({
    live: controllers.live,
    touch: (entry) => controllers.standby.touch(entry),
    store: d.store,
    changes: d.changes,
    logger: d.logger,
    ready: controllers.ready,
    domain: d.config.sandboxDomain,
    sandboxdToken: token,
    starts,
    ...(d.config.startWait ? { startWaitMs: d.config.startWait.timeoutMs } : {}),
    ...(d.gatewayIntercept ? { intercept: d.gatewayIntercept } : {}),
  });
  const sessions = new OpenSessions(
    access,
    (req) => {
      const target = gateway.match(req);
      // Every workspace the address may name (its canonical reading and older plain-form ones).
      if (target)
        return [...(target.canonical ? [target.canonical] : []), ...target.legacy].map((c) => c.workspace);
      return requestedWorkspace(req);
    },
    500,
    // Preview hosts: preview tokens (or an app's own Authorization header), checked by previews.
    (req) => (previews.match(req) ? previewCheck(req) : undefined),
  );
  /** A preview session ends with its preview or token; a host no preview claims: the bearer rule. */
  const previewCheck = (req: IncomingMessage) => {
    let claimed = false;
    return async () => {
      const admits = await previews.stillAdmits(req);
      if (admits !== undefined) {
        claimed = true;
        return admits;
      }
      if (claimed) return false; // the preview was deleted
      const bearer = sessions.bearerCheck(req);
      return bearer ? bearer() : true;
    };
  };
  // Sandbox schedules fire through sandboxd like a /process call (issue 14 item 6).
  const schedules = new ScheduleRunner({
    resources: d.store.resources,
    live: controllers.live,
    touch: (entry) => controllers.standby.touch(entry),
    sandboxdHeaders: (recordId) => ({ [SANDBOXD_TOKEN_HEADER]: token({ id: recordId }) }),
    secrets: box,
    changes: d.changes,
    logger: d.logger,
    ready: controllers.ready,
  });
  schedules.start();
  // Snapshot files whose record is gone: a deleted workspace's (its records cascade away). Swept
  // after the first resync and on every workspace deletion.
  const sweepSnapshots = async () => {
    const kept = new Set(
      (await d.store.resources.listByKind(SANDBOX_SNAPSHOT_KIND)).map((r) => r.externalId ?? ''),
    );
    for (const id of engine.snapshotIds()) if (!kept.has(id)) engine.deleteSnapshot(id);
  };
  const sweep = () =>
    void sweepSnapshots().catch((err: unknown) => d.logger.warn({ err }, 'snapshot sweep failed'));
  void controllers.ready.then(sweep, () => undefined);
  const unsubscribeSweep = d.changes.subscribe(WORKSPACE_KIND, sweep);
  const imageImport = imageImportApp({
    engine,
    images: d.images,
    ...(d.config.maxImageArchiveBytes ? { maxArchiveBytes: d.config.maxImageArchiveBytes } : {}),
    authenticator,
    workspaces,
    logger: d.logger,
    spoolDir: join(d.home, 'images-spool'),
  });
  return {
    engine,
    ensureBridge: () => engine.network.ensure(),
    memoryCapacityMB: engine.memoryCapacityMB,
    netnsOf: (engineId) => engine.network.netnsName(engineId),
    controllers,
    gateway,
    previews,
    sessions,
    rawRoutes: [imageImport],
    pool,
    poolStatus: async () => (warm ? warm.status() : []),
    snapshots: {
      async take(workspace, name, snapshotId) {
        const entry = controllers.live.get(workspace, name);
        if (!entry) throw new Error(`sandbox ${name} is not running`);
        // Thawed and marked RUNNING first, then held busy: a request during the copy waits on the
        // engine's freeze instead of thawing it (touch thaws only STANDBY), and standby keeps off.
        controllers.standby.touch(entry);
        entry.inflight += 1;
        try {
          return await engine.snapshotSandbox(entry.engineId, snapshotId);
        } finally {
          released(entry, Date.now());
        }
      },
      remove: (snapshotId) => engine.deleteSnapshot(snapshotId),
    },
    watchSandbox: (workspace, name) => starts.watch(workspace, name),
    async validateImage(ref, workspace) {
      const engineRef = await d.images.resolve(workspace, ref);
      if (engineRef === undefined) return false;
      try {
        await engine.ensureImage(engineRef); // builds tarmac/base on first use; unknown refs throw
        return true;
      } catch (err) {
        if (err instanceof ImageNotFoundError) return false;
        throw err;
      }
    },
    async stop() {
      schedules.stop();
      unsubscribeSweep();
      unsubscribeStarts();
      starts.close();
      gateway.close();
      previews.close();
      sessions.close();
      access.close();
      await controllers.stop();
      await warm?.stop(); // unclaimed members are nobody's: not left running (and reaped) after us
      // The bridge and its firewall go with the last platform using them, when one created them
      // and no sandbox is attached (packages/engine bridge-users.ts; issue 14 item 9).
      await engine.network.release().catch((err: unknown) => d.logger.warn({ err }, 'bridge release failed'));
    },
  };
}

/** The workspace a management request names (`workspace=` or X-Service-Workspace), if any. */
function requestedWorkspace(req: IncomingMessage): string[] | undefined {
  const url = req.url ?? '/';
  // Every management request passes here: parse the query only when it can name a workspace.
  const query = url.includes('workspace=') ? new URL(url, 'http://x').searchParams.get('workspace') : null;
  const header = req.headers['x-service-workspace'];
  const name = query || (Array.isArray(header) ? header[0] : header);
  return name ? [name] : undefined;
}
