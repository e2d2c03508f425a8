#!/usr/bin/env node
import { serve } from '@hono/node-server';
import { gracefulShutdown } from '@tarmac/server-kit';
import { openStore } from '@tarmac/store';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server as HttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { bootstrap } from './planes/identity/bootstrap.js';
import { composePlatform } from './compose.js';
import { baseUrl, ConfigError, resolveConfig } from './config.js';
import {
  ensureHome,
  homeLayout,
  loadOrCreateSecretKey,
  loadOrCreateSigningJwk,
  readCredentials,
  writeCredentials,
} from './home/home-files.js';
import { signingKeyFromJwk } from './planes/identity/auth/jwt.js';
import { connectionBudget } from './framework/connection-budget.js';
import { ExtraCaError, loadExtraCaCerts } from './framework/extra-ca-certs.js';
import { ConnectionGuard, DEFAULT_HTTP_TIMEOUTS } from './framework/connection-guard.js';
import { raiseFileLimit } from './framework/file-limit.js';
import { drainOnClose } from './framework/http-drain.js';
import { portAvailable, portInUseMessage, StartError } from './framework/port-available.js';
import { PLATFORM_VERSION } from './version.js';

/**
 * The platform process: the only place that reads the environment (one validated config,
 * config.ts), opens files and sockets; compose.ts then builds the shared services once and wires
 * the planes (engineering conventions; issue 13). Everything else receives what it needs.
 */
/**
 * sandboxd's bundle: beside this file under sandboxd/ when running from the packed CLI tarball
 * (scripts/pack.mjs), else the workspace package's build.
 */
function sandboxdBundlePath(): string {
  const packed = fileURLToPath(new URL('./sandboxd/sandboxd.bundle.mjs', import.meta.url));
  return existsSync(packed) ? packed : fileURLToPath(import.meta.resolve('@tarmac/sandboxd/bundle'));
}

/** better-sqlite3 alone beside this file in the packed CLI (scripts/pack.mjs), for the store's worker. */
function packedSqliteDriver(): string | undefined {
  const packed = fileURLToPath(new URL('./better-sqlite3.cjs', import.meta.url));
  return existsSync(packed) ? packed : undefined;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, host: { type: 'string' }, home: { type: 'string' } },
    allowPositionals: false,
  });
  const config = resolveConfig({ flags: values, env: process.env, homedir: homedir() });
  // Before anything starts (egress proxy, controllers, bridge): a busy port is a one-line error.
  if (!(await portAvailable(createNetServer, config.host, config.port)))
    throw new StartError(portInUseMessage(config.host, config.port));
  const logger = pino({ level: config.logLevel, base: { service: 'tarmac' } });
  const connections = config.connections;
  // Descriptors (issue 19 item 7): soft limit up to the hard one, then connection caps that keep
  // well under it (framework/connection-budget.ts), so sandboxes, the store and runc always have room.
  const fileLimit = await raiseFileLimit(
    process.pid,
    (cmd, args) =>
      new Promise((resolve, reject) =>
        execFile(cmd, args, { timeout: 5000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      ),
    () => readFile('/proc/self/limits', 'utf8'),
  );
  if (fileLimit.error)
    logger.warn({ fileLimit }, 'could not raise the open-files limit; run with a higher ulimit -n');
  const budget = connectionBudget(Number.isFinite(fileLimit.soft) ? fileLimit.soft : 1_048_576, connections);
  for (const c of budget.clamped) logger.warn(c);
  const onRefuse = (plane: string) => (address: string, why: string) =>
    logger.debug({ address, why, plane }, 'connection refused: over its cap');
  const publicGuard = new ConnectionGuard(budget.public, onRefuse('public'));
  const egressGuard = new ConnectionGuard(budget.egress, onRefuse('egress'));
  const httpTimeouts = {
    headersTimeoutMs: connections.headersTimeoutMs ?? DEFAULT_HTTP_TIMEOUTS.headersTimeoutMs,
    requestTimeoutMs: connections.requestTimeoutMs ?? DEFAULT_HTTP_TIMEOUTS.requestTimeoutMs,
    keepAliveTimeoutMs: connections.keepAliveTimeoutMs ?? DEFAULT_HTTP_TIMEOUTS.keepAliveTimeoutMs,
  };
  logger.info({ fileLimit: fileLimit.soft, connections: budget, httpTimeouts }, 'connection limits');
  const layout = homeLayout(config.home);
  await ensureHome(layout);

  const sqliteDriver = packedSqliteDriver();
  const store = await openStore({
    databaseUrl: config.databaseUrl ?? layout.database,
    ...(sqliteDriver ? { sqliteDriver } : {}),
  });
  const signingKey = await signingKeyFromJwk(await loadOrCreateSigningJwk(layout));
  const cursorSecret = await loadOrCreateSecretKey(layout, 'cursor.key');
  // Seals secret env values at rest; kept apart from the database (framework/secrets.ts).
  const secretKey = await loadOrCreateSecretKey(layout, 'secrets.key');
  const savedCredentials = await readCredentials(layout);
  const identity = await bootstrap(store, { mintKey: !savedCredentials, now: () => new Date() });

  let apiUrl = baseUrl(config, config.port);
  // Known once the listener is bound (port 0 picks one); read lazily by URL builders.
  let boundPort: number | undefined = undefined;
  const platform = await composePlatform({
    config,
    store,
    logger,
    layout,
    signingKey,
    cursorSecret,
    secretKey,
    proxyOnlyCa: config.egress.extraCaFile ? [await readFile(config.egress.extraCaFile, 'utf8')] : [],
    extraCaPem: await loadExtraCaCerts(config.extraCaCerts).catch((err: unknown) => {
      throw err instanceof ExtraCaError ? new ConfigError(`TARMAC_EXTRA_CA_CERTS: ${err.message}`) : err;
    }),
    sandboxdBundle: config.engine.sandboxdBundle ?? sandboxdBundlePath(),
    nodeBinary: process.execPath,
    apiUrl: () => apiUrl,
    boundPort: () => boundPort,
    connections: { publicGuard, egressGuard, httpTimeouts },
  });
  logger.info({ url: await platform.egressUrl() }, 'egress proxy listening');
  const app = platform.app;
  // Requests that arrive before credentials.json is written wait for it: a script that polls
  // /health and then reads the credentials file must never find it missing or stale.
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const server = serve({
    fetch: async (request, env) => {
      await started;
      return app.fetch(request, env);
    },
    port: config.port,
    hostname: config.host,
    createServer: platform.createServer,
  });
  const closeHttp = drainOnClose(server as HttpServer, 1500);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (err) {
    // Taken since the check above: stop what was started, so no proxy or controller outlives us.
    for (const closer of platform.closers) await closer.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new StartError(portInUseMessage(config.host, config.port));
    throw err;
  }
  const address = server.address();
  apiUrl = baseUrl(config, typeof address === 'object' && address ? address.port : config.port);
  boundPort = typeof address === 'object' && address ? address.port : config.port;

  const apiKey = identity.apiKey ?? savedCredentials?.apiKey ?? '';
  await writeCredentials(layout, {
    apiUrl,
    runUrl: apiUrl,
    workspace: identity.workspace,
    accountId: identity.accountId,
    apiKey,
  });
  markStarted();
  if (identity.apiKey) {
    // Printed once: the key is stored only hashed; the credentials file keeps the one copy.
    process.stderr.write(
      [
        '',
        identity.firstStart
          ? 'Tarmac is set up. Your admin credentials (shown once):'
          : 'New admin API key (the credentials file was missing):',
        `  API URL:    ${apiUrl}`,
        `  Account:    ${identity.accountId}`,
        `  Workspace:  ${identity.workspace}`,
        `  API key:    ${identity.apiKey}`,
        `  Saved to:   ${layout.credentials} (mode 0600)`,
        '',
      ].join('\n') + '\n',
    );
  }
  logger.info(
    { apiUrl, home: config.home, database: store.dialect, version: PLATFORM_VERSION },
    'tarmac is up',
  );

  const shutdown = gracefulShutdown(
    [
      // Idle and half-sent connections close at once, requests in flight get 1.5 s (http-drain.ts).
      { name: 'http', close: closeHttp },
      ...platform.closers,
      { name: 'store', close: () => store.close() },
    ],
    { logger, timeoutMs: 10_000 },
  );
  // `on`, not `once`: a second signal (Ctrl-C reaches both `tarmac up` and this child, which the CLI
  // also forwards) must not kill the process mid-shutdown; `shutdown` is idempotent.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      void shutdown().then(() => process.exit(0));
    });
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`tarmac: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof StartError) {
    process.stderr.write(`tarmac: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `tarmac: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
