#!/usr/bin/env node
import { serve } from '@hono/node-server';
import { gracefulShutdown } from '@tarmac/server-kit';
import { openStore } from '@tarmac/store';
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { buildApp } from './app.js';
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
import { signingKeyFromJwk } from './modules/identity/jwt.js';
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

  let apiUrl = baseUrl(config, config.port);
  let boundPort: number | undefined;
  const app = buildApp({
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
  });
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host });
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
            server.close(() => resolve());
            if ('closeIdleConnections' in server) server.closeIdleConnections();
          }),
      },
      { name: 'store', close: () => store.close() },
    ],
    { logger, timeoutMs: 10_000 },
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
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
