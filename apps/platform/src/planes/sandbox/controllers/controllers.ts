/**
 * Wires the sandbox and volume controllers together and to the ChangeFeed: a notice reconciles
 * at once, a periodic resync repairs anything missed (a lost notice, a container that died, a
 * record purged), and the first resync after start re-attaches to the sandboxes a previous
 * platform process left running (restart safety).
 */
import type { Engine } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import { ExpiryTimers } from './expiry-timers.js';
import { LiveSandboxes } from './live-sandboxes.js';
import { OrphanReaper } from './orphan-reaper.js';
import { WORKSPACE_KIND } from '../../../framework/workspace-deletion.js';
import { SandboxController, type SandboxControllerOptions } from './sandbox-controller.js';
import { SANDBOX_KIND, VOLUME_KIND, type EnvVar, type SandboxRow } from '../records/sandbox-record.js';
import { StandbyController, type Freezer } from './standby.js';
import { VolumeController } from './volume-controller.js';

export interface ControllerDeps {
  engine: Engine & Freezer;
  store: Pick<Store, 'resources'>;
  changes: ChangeFeed;
  logger: Logger;
  /** Idle time before STANDBY (TARMAC_STANDBY_AFTER; default 15 s). */
  standbyAfterMs: number;
  /** No freeze before this age (TARMAC_STANDBY_MIN_AGE; standby.ts STANDBY_MIN_AGE_MS). */
  standbyMinAgeMs?: number;
  resyncMs?: number;
  now?: () => number;
  /** Opens sealed secret env values at start (sandboxes module's SecretBox). */
  revealEnvs?: (row: SandboxRow) => EnvVar[];
  /** sandboxd's keep-alive process count; defaults to GET http://<ip>:8080/health. */
  keepAliveCount?: (ip: string, recordId: string) => Promise<number>;
  /** Egress env vars and CA files every sandbox gets (SandboxControllerOptions.sandboxDefaults). */
  sandboxDefaults?: SandboxControllerOptions['sandboxDefaults'];
  /** Age before an engine object without a record is removed (orphan-reaper.ts; 60 s). */
  orphanGraceMs?: number;
  /** How often orphans are looked for besides start and workspace deletion (30 s). */
  orphanIntervalMs?: number;
  /** The warm pool's containers, which the orphan reaper leaves alone (OrphanReaperDeps.isPooled). */
  isPooled?: (recordId: string) => boolean;
  /** Frees ledger memory (the pool's members) when a deploy finds the host full. */
  makeRoom?: SandboxControllerOptions['makeRoom'];
  /** Told after each reconcile of a sandbox record (the gateway's start waiters wake on it). */
  onRecord?: (row: SandboxRow) => void;
  /** Workspace image resolution (SandboxControllerOptions.resolveImage). */
  resolveImage?: SandboxControllerOptions['resolveImage'];
}

export interface Controllers {
  live: LiveSandboxes;
  standby: StandbyController;
  sandboxes: SandboxController;
  volumes: VolumeController;
  expiry: ExpiryTimers;
  orphans: OrphanReaper;
  /** First resync done: every surviving sandbox is re-attached. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

export function startControllers(deps: ControllerDeps): Controllers {
  const { resources } = deps.store;
  const live = new LiveSandboxes();
  // The two refer to each other; each closure runs only after both exist.
  const expiry: ExpiryTimers = new ExpiryTimers({
    live,
    expire: (id, reason) => sandboxes.expire(id, reason),
    ...(deps.now ? { now: deps.now } : {}),
    onError: (id, err) => deps.logger.error({ err, sandbox: id }, 'expiring a sandbox failed'),
  });
  const sandboxes = new SandboxController({
    engine: deps.engine,
    resources,
    live,
    logger: deps.logger,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.revealEnvs ? { revealEnvs: deps.revealEnvs } : {}),
    ...(deps.sandboxDefaults ? { sandboxDefaults: deps.sandboxDefaults } : {}),
    ...(deps.resolveImage ? { resolveImage: deps.resolveImage } : {}),
    ...(deps.makeRoom ? { makeRoom: deps.makeRoom } : {}),
    ...(deps.isPooled ? { claiming: deps.isPooled } : {}),
    freeze: (engineId) => deps.engine.freeze(engineId),
    onRecord: (row) => {
      expiry.track(row);
      deps.onRecord?.(row);
    },
  });
  const volumes = new VolumeController({ engine: deps.engine, resources, logger: deps.logger });
  const standby = new StandbyController({
    live,
    freezer: deps.engine,
    resources,
    logger: deps.logger,
    standbyAfterMs: deps.standbyAfterMs,
    ...(deps.standbyMinAgeMs !== undefined ? { minAgeMs: deps.standbyMinAgeMs } : {}),
    keepAliveCount: deps.keepAliveCount ?? ((ip) => sandboxdKeepAlive(ip)),
    ...(deps.now ? { now: deps.now } : {}),
  });

  const orphans = new OrphanReaper({
    engine: deps.engine,
    resources,
    logger: deps.logger,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.orphanGraceMs !== undefined ? { graceMs: deps.orphanGraceMs } : {}),
    ...(deps.isPooled ? { isPooled: deps.isPooled } : {}),
  });
  const reap = (scope: { workspace?: string } = {}) =>
    void orphans
      .reap(scope)
      .catch((err: unknown) => deps.logger.error({ err, scope }, 'orphan reaping failed'));

  // A notice is handled on the next turn of the event loop, not inside the writer's call: the
  // request that wrote the record answers first (issue 20 item 1: the reconcile a pooled create
  // published ran between its handler and its response, +1-2 ms quiet, +20 ms on a busy host).
  const byRef =
    (kind: string, reconcile: (id: string) => Promise<void>) =>
    (ref: { workspace: string; name: string }) => {
      setImmediate(() => {
        void resources
          .get(ref.workspace, kind, ref.name)
          .then((row) => (row ? reconcile(row.id) : undefined))
          .catch((err: unknown) => deps.logger.error({ err, ref }, 'reconcile after a change notice failed'));
      });
    };
  const unsubscribe = [
    deps.changes.subscribe(
      SANDBOX_KIND,
      byRef(SANDBOX_KIND, (id) => sandboxes.reconcile(id)),
    ),
    deps.changes.subscribe(
      VOLUME_KIND,
      byRef(VOLUME_KIND, (id) => volumes.reconcile(id)),
    ),
    // A deleted workspace's records are gone (cascade): remove its containers now (issue 19 item 8).
    deps.changes.subscribe(WORKSPACE_KIND, (ref) => reap({ workspace: ref.name })),
  ];

  const resync = () => Promise.all([volumes.resync(), sandboxes.resync()]).then(() => undefined);
  const ready = resync();
  ready.catch((err: unknown) => deps.logger.error({ err }, 'initial resync failed'));
  let resyncing = false;
  const timer = setInterval(() => {
    if (resyncing) return;
    resyncing = true;
    resync()
      .catch((err: unknown) => deps.logger.error({ err }, 'periodic resync failed'))
      .finally(() => (resyncing = false));
  }, deps.resyncMs ?? 3000);
  timer.unref();
  // Orphans of a crash or of an older platform: after the first resync, then periodically.
  void ready.then(() => reap()).catch(() => undefined);
  const orphanTimer = setInterval(() => reap(), deps.orphanIntervalMs ?? 30_000);
  orphanTimer.unref();
  standby.start();

  return {
    live,
    standby,
    sandboxes,
    volumes,
    expiry,
    orphans,
    ready,
    async stop() {
      clearInterval(timer);
      clearInterval(orphanTimer);
      for (const u of unsubscribe) u();
      standby.stop();
      expiry.stop();
      // Sandboxes keep running: containers are not our children (restart safety). Only wait for
      // reconciles in flight so no half-written record is left behind.
      await Promise.all([sandboxes.idle(), volumes.idle()]);
    },
  };
}

/**
 * `keepAlive` of sandboxd's /health (packages/sandboxd health.ts). sandboxd gives it only to a
 * caller with its token (`headers`, gateway/sandbox-credentials.ts); without, keepAlive reads 0.
 */
export async function sandboxdKeepAlive(ip: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`http://${ip}:8080/health`, { headers, signal: AbortSignal.timeout(1000) });
  const body = (await res.json()) as { keepAlive?: unknown };
  return typeof body.keepAlive === 'number' ? body.keepAlive : 0;
}
