#!/usr/bin/env node
import { serve } from '@hono/node-server';
import { gracefulShutdown } from '@tarmac/server-kit';
import { openStore } from '@tarmac/store';
import { DEFAULT_NETWORK, ProcessRunner } from '@tarmac/engine';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { createMeter, meteringIntervalMs } from './metering/metering.js';
import { resolvePrices } from './metering/prices.js';
import { bootstrap } from './bootstrap.js';
import { baseUrl, ConfigError, resolveConfig } from './config.js';
import {
  ensureHome,
  homeLayout,
  loadOrCreateSecretKey,
  loadOrCreateSigningJwk,
  readCredentials,
  writeCredentials,
} from './home/home-files.js';
import { engineConfigFrom } from './controllers/engine-config.js';
import { parseResolveList } from './egress/destination-guard.js';
import { EgressPlane } from './egress/egress-plane.js';
import { withSandboxGateway } from './gateway/listener.js';
import { startSandboxPlane } from './gateway/sandbox-plane.js';
import { JwtService, signingKeyFromJwk } from './modules/identity/jwt.js';
import { ChangeFeed } from './shared/change-feed.js';
import { PLATFORM_VERSION } from './version.js';

/**
 * The platform process: the only place that reads the environment, opens files and sockets, and
 * makes singletons (engineering conventions). Everything else receives what it needs.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, host: { type: 'string' }, home: { type: 'string' } },
    allowPositionals: false,
  });
  const config = resolveConfig({ flags: values, env: process.env, homedir: homedir() });
  const logger = pino({ level: config.logLevel, base: { service: 'tarmac' } });
  const layout = homeLayout(config.home);
  await ensureHome(layout);

  const store = await openStore({ databaseUrl: config.databaseUrl ?? layout.database });
  const signingKey = await signingKeyFromJwk(await loadOrCreateSigningJwk(layout));
  const cursorSecret = await loadOrCreateSecretKey(layout, 'cursor.key');
  // Seals secret env values at rest; kept apart from the database (resources/secrets.ts).
  const secretKey = await loadOrCreateSecretKey(layout, 'secrets.key');
  const savedCredentials = await readCredentials(layout);
  const identity = await bootstrap(store, { mintKey: !savedCredentials, now: () => new Date() });

  // Engine wiring (issue 4): the local runc engine, sandbox/volume controllers and the sandbox
  // gateway; they share one ChangeFeed with the API's services.
  const changeFeed = new ChangeFeed();
  const engineConfig = engineConfigFrom(process.env);
  // Egress (egress/ARCHITECTURE.md): the proxy on the bridge gateway is the sandboxes' only way
  // out; TARMAC_EGRESS_PORT (3128), and for tests TARMAC_EGRESS_RESOLVE (name=ip,...) and
  // TARMAC_EGRESS_EXTRA_CA (a PEM file trusted for upstream TLS).
  const egressPort = Number(process.env.TARMAC_EGRESS_PORT ?? '3128');
  const egress = await EgressPlane.prepare({
    home: layout,
    subnet: engineConfig.network.subnet ?? DEFAULT_NETWORK.subnet,
    port: egressPort,
    resolve: parseResolveList(process.env.TARMAC_EGRESS_RESOLVE),
    extraUpstreamCa: process.env.TARMAC_EGRESS_EXTRA_CA
      ? [await readFile(process.env.TARMAC_EGRESS_EXTRA_CA, 'utf8')]
      : [],
    log: (event) => logger.debug(event, 'egress'),
    now: new Date(),
  });
  engineConfig.network.allowedHostPorts = egress.ports;
  const sandboxPlane = startSandboxPlane({
    sandboxDefaults: egress.sandboxDefaults,
    gatewayIntercept: egress.intercept,
    home: config.home,
    config: engineConfig,
    sandboxdBundle:
      engineConfig.sandboxdBundle ?? fileURLToPath(import.meta.resolve('@tarmac/sandboxd/bundle')),
    nodeBinary: process.execPath,
    store,
    changes: changeFeed,
    logger,
    jwt: new JwtService(signingKey, 'tarmac'),
    secretsKey: secretKey,
  });
  await egress.start({
    ensureBridge: () => sandboxPlane.engine.network.ensure(),
    live: sandboxPlane.controllers.live,
    resources: store.resources,
    secretKey,
    changes: changeFeed,
    runner: new ProcessRunner(),
    netnsOf: (engineId) => sandboxPlane.engine.network.netnsName(engineId),
    ready: sandboxPlane.controllers.ready,
  });
  logger.info({ url: await egress.url() }, 'egress proxy listening');

  // Metering (metering/ARCHITECTURE.md): prices and pass interval from the environment; the meter
  // listens to the same change feed as the controllers.
  const prices = resolvePrices(process.env.TARMAC_METERING_PRICES);
  const meteringInterval = meteringIntervalMs(process.env.TARMAC_METERING_INTERVAL_SECONDS);
  let apiUrl = baseUrl(config, config.port);
  // Known once the listener is bound (port 0 picks one); read lazily by URL builders.
  let boundPort: number | undefined = undefined;
  const app = buildApp({
    changeFeed,
    validateImage: (ref) => sandboxPlane.validateImage(ref),
    maxSandboxMemoryMB: sandboxPlane.engine.memoryCapacityMB,
    store,
    logger,
    signingKey,
    cursorSecret,
    secretKey,
    hosts: {
      port: () => boundPort,
      ...(process.env.TARMAC_DOMAIN ? { domain: process.env.TARMAC_DOMAIN } : {}),
      ...(process.env.TARMAC_REGION ? { region: process.env.TARMAC_REGION } : {}),
    },
    apiUrl: () => apiUrl,
    version: PLATFORM_VERSION,
    prices,
  });
  const meter = createMeter(store, logger);
  meter.start(meteringInterval, changeFeed);
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
    createServer: withSandboxGateway(
      () => sandboxPlane.gateway,
      () => sandboxPlane.rawRoutes,
      () => sandboxPlane.previews,
    ),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
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
      {
        name: 'http',
        close: () =>
          new Promise<void>((resolve) => {
            // Keep-alive connections become idle as their in-flight requests finish; close them as
            // they do, or close() would wait for the clients' keep-alive timeout.
            const idle = setInterval(() => {
              if ('closeIdleConnections' in server) server.closeIdleConnections();
            }, 50);
            server.close(() => {
              clearInterval(idle);
              resolve();
            });
            if ('closeIdleConnections' in server) server.closeIdleConnections();
          }),
      },
      // Sandboxes keep running (restart safety); only the controllers' loops stop.
      { name: 'sandboxes', close: () => sandboxPlane.stop() },
      { name: 'egress', close: () => egress.close() },
      // Closes every open usage interval before the store goes away.
      { name: 'metering', close: () => meter.stop() },
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
  process.stderr.write(
    `tarmac: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
