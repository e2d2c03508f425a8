// sandboxd: the in-sandbox daemon serving the sandbox API (reference sandbox-api.md §1) and its
// MCP endpoint. createSandboxd wires the routes over injected config; it does not listen. The
// program entry (argv, env, sockets) is main.ts.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { LOG_FILE_MAX_BYTES, systemClock, type SandboxdConfig } from './config.js';
import { multipartRoutes } from './fs/multipart-upload.js';
import type { PathContext } from './fs/paths.js';
import { filesystemRoutes } from './fs/routes.js';
import { searchRoutes } from './fs/search-routes.js';
import { WatchBudget, watchRoutes } from './fs/watch.js';
import { claimRoutes } from './claim.js';
import { healthRoutes } from './health.js';
import { createApp, normalizeRequest } from './http/app.js';
import { guardUpgrade } from './http/gateway-token.js';
import { HttpError } from './http/errors.js';
import { LIMITS } from './http/limits.js';
import { StreamBudget } from './http/stream.js';
import { allowedHostnames } from './mcp/host-guard.js';
import { mcpRoutes } from './mcp/routes.js';
import { PortMonitors } from './network/monitor.js';
import { networkRoutes } from './network/routes.js';
import { unavailableTunnel } from './network/tunnel.js';
import { ProcessManager, type Spawner } from './process/manager.js';
import { processPorts } from './process/ports.js';
import { processRoutes } from './process/routes.js';
import { TERMINAL_PAGE } from './terminal/page.js';
import { nodePtyFactory, type PtyFactory } from './terminal/pty.js';
import { TerminalSessions } from './terminal/sessions.js';
import { terminalUpgrade } from './terminal/ws.js';

export const DEFAULT_PORT = 8080;
export const VERSION = '0.1.0';

export interface SandboxdDeps {
  spawn?: Spawner;
  ptyFactory?: PtyFactory;
  /** Restart delay of restartOnFailure (1 s upstream); tests shorten it. */
  restartDelayMs?: number;
  /** MCP processExecute wait cap (58 s upstream). */
  mcpWaitCapSec?: number;
}

export interface Sandboxd {
  server: Server;
  app: Hono;
  processes: ProcessManager;
  /** Stops monitors, terminals and SIGKILLs every process group, then closes the server. */
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM from the engine): stops accepting requests, SIGTERMs every process
   * group and waits for all of them, so they get the engine's grace period (sandboxd's exit ends
   * the container: tini exits with its child).
   */
  shutdown(): Promise<void>;
}

/** Fills the defaults of everything but the working directory. */
export function defaultConfig(c: Partial<SandboxdConfig> & { workingDir: string }): SandboxdConfig {
  return {
    home: c.workingDir,
    logDir: join(tmpdir(), 'sandbox-api-logs'),
    tmpDir: tmpdir(),
    env: {},
    shell: 'sh',
    shellArgs: ['-c'],
    keepAliveDisabled: false,
    terminalDisabled: false,
    logFileMaxBytes: LOG_FILE_MAX_BYTES,
    procRoot: '/proc',
    version: VERSION,
    clock: systemClock,
    tunnel: unavailableTunnel,
    keepaliveMs: { logs: 30_000, watch: 30_000, exec: 5_000 },
    ...c,
  };
}

export function createSandboxd(config: SandboxdConfig, deps: SandboxdDeps = {}): Sandboxd {
  const ctx: PathContext = { workingDir: config.workingDir, home: config.home };
  const pm = new ProcessManager({
    shell: config.shell,
    shellArgs: config.shellArgs,
    env: config.env,
    logDir: config.logDir,
    logFileMaxBytes: config.logFileMaxBytes,
    keepAliveDisabled: config.keepAliveDisabled,
    clock: config.clock,
    ...(deps.spawn ? { spawn: deps.spawn } : {}),
    ...(deps.restartDelayMs !== undefined ? { restartDelayMs: deps.restartDelayMs } : {}),
    ...(config.stateDir ? { stateDir: config.stateDir } : {}),
    ...(config.mkfifo ? { mkfifo: config.mkfifo } : {}),
    procRoot: config.procRoot,
  });
  // The processes a previous sandboxd started (it died and its supervisor restarted it).
  pm.restore();
  const monitors = new PortMonitors((pid) => processPorts(config.procRoot, pid));
  const terminals = new TerminalSessions(deps.ptyFactory ?? nodePtyFactory, LIMITS.terminalSessions);

  const app = createApp(config.gatewayToken);
  const mcpAllowed = allowedHostnames(config.mcpAllowedHosts);
  // Before /health: the claim's ping applies the claim (claim.ts).
  const claims = claimRoutes(app, {
    pooled: config.pooled ?? false,
    bootEnvFile: config.bootEnvFile,
    env: config.env,
    stateDir: config.stateDir,
    mcpHosts: mcpAllowed,
    warm: () => pm.warm(config.workingDir),
  });
  healthRoutes(app, pm, config.clock, config.version);
  filesystemRoutes(app, ctx);
  multipartRoutes(app, ctx, config.tmpDir, config.clock);
  searchRoutes(app, ctx);
  const streams = new StreamBudget(LIMITS.streams, LIMITS.streamBacklogBytes);
  watchRoutes(app, ctx, config.keepaliveMs.watch, streams, new WatchBudget(LIMITS.watchedDirs));
  processRoutes(app, pm, ctx, { procRoot: config.procRoot, keepaliveMs: config.keepaliveMs, streams });
  networkRoutes(app, config.procRoot, monitors, config.tunnel);
  mcpRoutes(app, {
    pm,
    ctx,
    procRoot: config.procRoot,
    version: config.version,
    waitCapSec: deps.mcpWaitCapSec,
    allowed: mcpAllowed,
  });
  app.get('/terminal', (c) => {
    if (config.terminalDisabled) throw new HttpError(404, 'terminal is disabled');
    return c.html(TERMINAL_PAGE);
  });

  // The node bindings ({incoming, outgoing}) are passed on only for requests not rewritten by
  // normalizeRequest, so a route reading `incoming` directly never races a Request's body.
  const server = createAdaptorServer({
    fetch: (req: Request, env: unknown) => {
      const n = normalizeRequest(req);
      return app.fetch(n, n === req ? env : undefined);
    },
    serverOptions: { maxHeaderSize: LIMITS.maxHeaderBytes },
  }) as Server;
  // Bounds on what clients can hold (issue 19 item 6, http/limits.ts). No whole-request timeout:
  // uploads may be long; stalled bodies are cut by the body-idle guard instead.
  server.maxConnections = LIMITS.connections;
  server.headersTimeout = LIMITS.headersTimeoutMs;
  server.keepAliveTimeout = LIMITS.keepAliveTimeoutMs;
  server.requestTimeout = 0;
  // An accept failing (EMFILE) is an 'error' on the server: unheard, it would end sandboxd. One
  // before listening (port taken) still does: the supervisor retries.
  server.on('error', (err) => {
    if (!server.listening) throw err;
    console.error('sandboxd: server error:', err);
  });
  const upgrade = terminalUpgrade(terminals, {
    ctx,
    env: config.env,
    defaultShell: config.env.SHELL ?? (existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh'),
    disabled: config.terminalDisabled,
  });
  server.on(
    'upgrade',
    guardUpgrade(config.gatewayToken, (req, socket, head) => {
      claims.check(); // a terminal as the claimed sandbox's first request gets its env (claim.ts)
      upgrade(req, socket, head);
    }),
  );

  const stopServer = (): void => {
    monitors.stopAll();
    terminals.closeAll();
    upgrade.close();
    server.close();
    server.closeAllConnections();
  };
  return {
    server,
    app,
    processes: pm,
    shutdown: async () => {
      stopServer();
      await pm.terminateAll();
    },
    close: () =>
      new Promise<void>((resolve) => {
        monitors.stopAll();
        terminals.closeAll();
        upgrade.close();
        pm.killAll();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The value after `name` in argv, if any. */
export function parseFlag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Parses `--port N` (the engine passes flags, not env, so nothing leaks into user processes). */
export function parsePort(argv: readonly string[]): number {
  const i = argv.indexOf('--port');
  const raw = i >= 0 ? argv[i + 1] : undefined;
  const port = raw === undefined ? DEFAULT_PORT : Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`invalid --port ${raw}`);
  return port;
}
