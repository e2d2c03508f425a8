import type { EngineConfig } from './planes/sandbox/controllers/engine-config.js';
import { parseCidrList, parseResolveList } from './framework/destinations/destination-guard.js';
import type { PriceTable } from './planes/metering/prices.js';
import { buildConfig, type BuildConfig } from './config/builds.js';
import { resolveConnectionConfig, type ConnectionConfig } from './config/connections.js';
import { engineConfig } from './config/engine.js';
import { platformEnvSchema } from './config/env-schema.js';
import { extraCaSources, type ExtraCaSources } from './config/extra-ca.js';
import { meteringIntervalMs, prices } from './config/metering.js';
import { modelGatewayConfig, type ModelGatewayConfig } from './config/models.js';
import { asConfigError, ConfigError } from './config/values.js';
import { jobsConfig, runConfig, type JobsConfig, type RunConfig } from './config/workloads.js';

// The pieces live under config/, one concept each; this module is what the rest imports.
export { platformEnvSchema, type PlatformEnv } from './config/env-schema.js';
export { ConfigError } from './config/values.js';
export { HOST_LOCAL_CA_DIR, type ExtraCaSources } from './config/extra-ca.js';
export { resolveConnectionConfig, type ConnectionConfig } from './config/connections.js';
export type { BuildConfig } from './config/builds.js';
export type { ModelGatewayConfig } from './config/models.js';
export type { JobsConfig, RunConfig } from './config/workloads.js';

/** Settings of one platform process, resolved from flags then environment then defaults. */
export interface PlatformConfig {
  home: string;
  host: string;
  port: number;
  /** `postgres://…` or undefined for SQLite under home. */
  databaseUrl: string | undefined;
  /** Public base URL override (behind a proxy); otherwise derived from host and port. */
  publicUrl: string | undefined;
  logLevel: string;
  /** Host-style URL parts that differ from the defaults (framework/hosts.ts). */
  hosts: { domain?: string; region?: string };
  engine: EngineConfig;
  egress: {
    port: number;
    resolve: Record<string, string>;
    extraCaFile: string | undefined;
    allowCidrs: string[];
  };
  metering: { prices: PriceTable; intervalMs: number };
  jobs: JobsConfig;
  run: RunConfig;
  connections: ConnectionConfig;
  /** Where the extra trusted CAs are (TARMAC_EXTRA_CA_CERTS); `required`: a missing path is an error. */
  extraCaCerts: ExtraCaSources;
  models: ModelGatewayConfig;
  builds: BuildConfig;
}

export interface ConfigSources {
  flags: { port?: string | undefined; host?: string | undefined; home?: string | undefined };
  env: Record<string, string | undefined>;
  homedir: string;
}

export function resolveConfig({ flags, env, homedir }: ConfigSources): PlatformConfig {
  const parsed = platformEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(issue?.message ?? 'invalid environment');
  }
  const e = parsed.data;
  const portText = flags.port ?? env.TARMAC_PORT ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) {
    throw new ConfigError(`--port must be a number from 0 to 65535, got "${portText}"`);
  }
  return {
    home: flags.home ?? env.TARMAC_HOME ?? `${homedir}/.tarmac`,
    host: flags.host ?? env.TARMAC_HOST ?? '127.0.0.1',
    port,
    databaseUrl: e.TARMAC_DATABASE_URL,
    publicUrl: e.TARMAC_PUBLIC_URL,
    logLevel: env.TARMAC_LOG_LEVEL ?? 'info',
    hosts: {
      ...(e.TARMAC_DOMAIN ? { domain: e.TARMAC_DOMAIN } : {}),
      ...(e.TARMAC_REGION ? { region: e.TARMAC_REGION } : {}),
    },
    engine: engineConfig(e),
    egress: {
      port: Number(env.TARMAC_EGRESS_PORT ?? '3128'),
      resolve: parseResolveList(e.TARMAC_EGRESS_RESOLVE),
      extraCaFile: e.TARMAC_EGRESS_EXTRA_CA,
      allowCidrs: asConfigError(() =>
        parseCidrList(e.TARMAC_EGRESS_ALLOW_CIDRS, 'TARMAC_EGRESS_ALLOW_CIDRS'),
      ),
    },
    metering: {
      prices: prices(e.TARMAC_METERING_PRICES),
      intervalMs: meteringIntervalMs(e.TARMAC_METERING_INTERVAL_SECONDS),
    },
    jobs: jobsConfig(e),
    run: runConfig(e),
    connections: resolveConnectionConfig(e),
    extraCaCerts: extraCaSources(e),
    models: modelGatewayConfig(e),
    builds: buildConfig(e),
  };
}

/** The URL clients use: the public override, or the listener with a wildcard host shown as localhost. */
export function baseUrl(config: Pick<PlatformConfig, 'host' | 'publicUrl'>, boundPort: number): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${boundPort}`;
}
