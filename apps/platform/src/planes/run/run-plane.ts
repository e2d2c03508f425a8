/**
 * The run plane (issue 16), built by the composition root (compose.ts): the run controller, the
 * run gateway on the platform's listener, and the replica-logs routes. Everything of another plane
 * comes in through run-ports.ts (and the framework's access cache, held-request waiters and log
 * archive); this file only assembles (ARCHITECTURE.md beside it).
 */
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { agentRoutes, applicationRoutes, functionRoutes } from '@tarmac/contract';
import { mountRoute, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Authenticator, WorkspaceResolver } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { AccessCache } from '../../framework/access-cache.js';
import type { ChangeFeed } from '../../framework/change-feed.js';
import { StartWaiters } from '../../framework/held-requests.js';
import { LogArchive } from '../../framework/log-archive.js';
import { AppHosts } from './app-hosts.js';
import { DEFAULT_AUTOSCALE, type AutoscaleSettings } from './autoscaler.js';
import { replicaLogs } from './replica-logs.js';
import { RunController } from './run-controller.js';
import { RunGateway } from './run-gateway.js';
import type { IdleSettings } from './idle-policy.js';
import type { Forwarder, ReplicaEngine, ReplicaSetup, RunCatalogue } from './run-ports.js';
import { publicDestinationGuards } from '../../framework/destinations/public-destinations.js';
import { AsyncRuns, type AsyncLimits } from './triggers/async-runs.js';
import { AsyncSpool } from './triggers/async-spool.js';
import { CallbackSender } from './triggers/callback-sender.js';
import { TriggerRoutes } from './triggers/trigger-routes.js';
import { ReplicaUsage } from './usage/replica-usage.js';

export interface RunPlaneDeps {
  catalogue: RunCatalogue & { kinds: readonly string[] };
  engine: ReplicaEngine;
  setup: ReplicaSetup;
  forwarder: Forwarder;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  changes: ChangeFeed;
  /** TARMAC_HOME: archived replica output goes under run/logs, accepted async requests run/async. */
  home: string;
  logger: Logger;
  readyTimeoutMs: number;
  startupCpuCores: number;
  holdMs: number;
  maxHeld: number;
  /** STANDBY and stop windows (TARMAC_RUN_STANDBY_AFTER_SECONDS, TARMAC_RUN_STOP_AFTER_SECONDS). */
  idle: IdleSettings;
  /** The platform's domain: applications' own hosts are `app-<name>-<ws>[.<region>].<domain>`. */
  domain: string;
  /** The platform's own hostnames, never routed to an application whatever a record claims. */
  platformHostnames?: readonly string[];
  /** Async requests' bounds and the callback allow-list (TARMAC_RUN_ASYNC_*, TARMAC_CALLBACK_ALLOW). */
  async?: AsyncLimits & { callbackAllowCidrs: readonly string[] };
  /** The platform's own port: never a callback's destination. */
  selfPort?: () => number | undefined;
  /** The autoscaler's settings (TARMAC_RUN_TARGET_CONCURRENCY …); its defaults when absent. */
  autoscale?: Partial<AutoscaleSettings>;
}

/** A route the listener tries on every request (and upgrade) before the others. */
export interface PlaneRoute {
  matches(req: IncomingMessage): boolean;
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
  /** Claimed by Host: tried before path-style routes (listener.ts), so every path is the app's. */
  byHost?: boolean;
}

export interface RunPlane {
  controller: RunController;
  gateway: RunGateway;
  /** What replicas consume and async requests, for the meter (planes/metering/run-source.ts). */
  usage: ReplicaUsage;
  /** `{run_url}/{ws}/{agents|functions}/{name}[/path]`. */
  route: PlaneRoute;
  /** Applications by Host (app-hosts.ts). */
  hostRoute: PlaneRoute;
  register(app: Hono<ServerEnv>, deps: RouteDeps): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createRunPlane(d: RunPlaneDeps): RunPlane {
  const logs = new LogArchive(join(d.home, 'run', 'logs'));
  const held = new StartWaiters(d.maxHeld);
  const usage = new ReplicaUsage();
  const triggers = new TriggerRoutes();
  const controller = new RunController({
    usage,
    onRecords: (records) => triggers.update(records),
    catalogue: d.catalogue,
    engine: d.engine,
    setup: d.setup,
    logs,
    logger: d.logger,
    readyTimeoutMs: d.readyTimeoutMs,
    startupCpuCores: d.startupCpuCores,
    idle: d.idle,
    ...(d.forwarder.dropIdle ? { dropIdle: d.forwarder.dropIdle.bind(d.forwarder) } : {}),
    autoscale: { ...DEFAULT_AUTOSCALE, ...d.autoscale },
    onRecord: (kind, workspace, name) => held.notify(workspace, `${kind}/${name}`),
  });
  const access = new AccessCache(d.authenticator, d.workspaces, Date.now, undefined, undefined, d.changes);
  const limits = d.async ?? { concurrency: 4, queue: 100, maxBodyBytes: 1 << 20, callbackAllowCidrs: [] };
  const asyncRuns: AsyncRuns = new AsyncRuns({
    replicaFor: (addr, gone, deadline, headers) => gateway.replicaFor(addr, gone, deadline, headers),
    sender: new CallbackSender({
      ...publicDestinationGuards(limits.callbackAllowCidrs),
      selfPort: d.selfPort ?? (() => undefined),
    }),
    spool: new AsyncSpool(join(d.home, 'run', 'async')),
    secretOf: async (record, id) => d.catalogue.callbackSecret?.(record, id),
    count: (r, requestId, at) =>
      usage.countAsync({ recordId: r.id, kind: r.kind, workspace: r.workspace, name: r.name, requestId, at }),
    limits,
    logger: d.logger,
  });
  const gateway: RunGateway = new RunGateway({
    controller,
    access,
    forwarder: d.forwarder,
    held,
    holdMs: d.holdMs,
    logger: d.logger,
    triggers,
    async: asyncRuns,
  });
  // An API write (create, PUT, delete) reconciles at once instead of at the next tick.
  const unsubscribe = d.catalogue.kinds.map((kind) => d.changes.subscribe(kind, () => controller.kick()));
  const logDeps = { controller, engine: d.engine, logs };
  const apps = new AppHosts(() => controller.snapshot(), d.domain, d.platformHostnames);
  return {
    controller,
    gateway,
    usage,
    route: {
      matches: (req) => gateway.match(req) !== undefined,
      listener: (req, res) => {
        const addr = gateway.match(req);
        if (addr) void gateway.handle(req, res, addr);
      },
      upgrade: (req, socket, head) => {
        const addr = gateway.match(req);
        if (!addr) return false;
        void gateway.upgrade(req, socket, head, addr);
        return true;
      },
    },
    hostRoute: {
      byHost: true,
      matches: (req) => apps.match(req) !== undefined,
      listener: (req, res) => {
        const addr = apps.match(req);
        if (addr) void gateway.handle(req, res, addr);
      },
      upgrade: (req, socket, head) => {
        const addr = apps.match(req);
        if (!addr) return false;
        void gateway.upgrade(req, socket, head, addr);
        return true;
      },
    },
    register(app, deps) {
      mountRoute(app, deps, agentRoutes.replicaLogs, async ({ ctx, params, query }) =>
        replicaLogs(logDeps, 'agent', workspaceOf(ctx).name, params.agentName, query.offset, query.replica),
      );
      mountRoute(app, deps, functionRoutes.replicaLogs, async ({ ctx, params, query }) =>
        replicaLogs(
          logDeps,
          'function',
          workspaceOf(ctx).name,
          params.functionName,
          query.offset,
          query.replica,
        ),
      );
      mountRoute(app, deps, applicationRoutes.replicaLogs, async ({ ctx, params, query }) =>
        replicaLogs(
          logDeps,
          'application',
          workspaceOf(ctx).name,
          params.applicationName,
          query.offset,
          query.replica,
        ),
      );
    },
    async start() {
      await controller.start();
      // What a stopped or crashed platform accepted and did not deliver (async-spool.ts). A
      // failure leaves them on disk for the next start.
      try {
        const recovered = await asyncRuns.recover(await d.catalogue.list());
        if (recovered > 0) d.logger.info({ recovered }, 'async requests from before the restart queued');
      } catch (err) {
        d.logger.error({ err }, 'async requests from before the restart not recovered');
      }
    },
    async stop() {
      for (const off of unsubscribe) off();
      held.close();
      await asyncRuns.stop();
      await controller.stop();
      access.close();
    },
  };
}
