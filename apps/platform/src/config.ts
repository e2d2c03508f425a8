import { lifecycleDurationSeconds } from '@tarmac/contract';
import { z } from 'zod';
import { DEFAULT_METERING_INTERVAL_SECONDS } from './planes/metering/metering.js';
import { DEFAULT_PRICES, priceOverridesSchema, type PriceTable } from './planes/metering/prices.js';
import type { EngineConfig } from './planes/sandbox/controllers/engine-config.js';
import { parseCidrList, parseResolveList } from './framework/destinations/destination-guard.js';
import { parsePoolShapes } from './planes/sandbox/pool/pool-shapes.js';
import { BUILD_NETWORK_MODES, type BuildNetworkMode } from './planes/builds/build-network.js';

/**
 * Every environment variable the platform process reads, in one schema (issue 13: one validated
 * config; main.ts is the only reader of `process.env` and hands the result to compose.ts). Unset
 * and empty mean the same: the default. A bad value is a ConfigError naming the variable (exit 2).
 */
const optional = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

export const platformEnvSchema = z.object({
  // Platform core (issue "Platform core" §2, §3); --home, --host and --port win over these.
  /** Data directory: keys, credentials.json, the SQLite database, sandbox state (~/.tarmac). */
  TARMAC_HOME: optional,
  /** Listener address (127.0.0.1). */
  TARMAC_HOST: optional,
  /** Listener port, 0–65535; 0 picks a free one (8080). */
  TARMAC_PORT: optional,
  /** `postgres://…`; SQLite under TARMAC_HOME without it. */
  TARMAC_DATABASE_URL: optional.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), {
    message: 'TARMAC_DATABASE_URL must be a postgres:// URL (SQLite is the default without it)',
  }),
  /** Public base URL behind a proxy; otherwise derived from host and port. */
  TARMAC_PUBLIC_URL: optional,
  /** pino level (info). */
  TARMAC_LOG_LEVEL: optional,
  /** Domain and region of host-style sandbox and preview URLs (localhost; no region). */
  TARMAC_DOMAIN: optional,
  TARMAC_REGION: optional,

  // Sandbox plane: engine and controllers (planes/sandbox/controllers/ARCHITECTURE.md).
  /** Idle time before STANDBY: seconds or a duration (`15s`, `2m`); 15 s. */
  TARMAC_STANDBY_AFTER: optional,
  /** Image store shared between homes (tests: one base-image cache). */
  TARMAC_IMAGE_DIR: optional,
  /** Largest image archive POST /v0/images/import takes, whole MB (16384; issue 19 item 1). */
  TARMAC_IMAGE_MAX_ARCHIVE_MB: optional,
  /** Sandbox bridge and its IPv4 CIDR (tarmac0, 10.200.0.0/16). */
  TARMAC_BRIDGE: optional,
  TARMAC_SUBNET: optional,
  /** The sandboxd bundle injected into sandboxes (the @tarmac/sandboxd build). */
  TARMAC_SANDBOXD_BUNDLE: optional,
  /** A static tini (/usr/bin/tini-static). */
  TARMAC_TINI: optional,

  // Sandbox plane: egress (planes/sandbox/egress/ARCHITECTURE.md).
  /** Port of the egress proxy on the bridge gateway (3128). */
  TARMAC_EGRESS_PORT: optional,
  /** Tests: fixed DNS answers, `name=ip,…`. */
  TARMAC_EGRESS_RESOLVE: optional,
  /** Tests: a PEM file the egress proxy alone trusts for upstream TLS (sandboxes do not). */
  TARMAC_EGRESS_EXTRA_CA: optional,
  /**
   * CAs trusted beyond the public roots (issue 14 item 10: a TLS-inspecting corporate proxy), by
   * the egress proxy's upstream TLS, every sandbox's trust stores and builds: comma-separated PEM
   * files or directories (their *.crt and *.pem). Default: what this host trusts beyond Debian's
   * bundle, /usr/local/share/ca-certificates and NODE_EXTRA_CA_CERTS (framework/extra-ca-certs.ts).
   * `none`: no extra CA.
   */
  TARMAC_EXTRA_CA_CERTS: optional,
  /** Read only as part of TARMAC_EXTRA_CA_CERTS's default (node's own extra CA file). */
  NODE_EXTRA_CA_CERTS: optional,
  /**
   * Internal destinations the operator opens to sandboxes through the proxy, comma-separated
   * CIDRs (e.g. `10.0.5.0/24,fd00:1::/64`); by default every host, bridge, private, loopback and
   * link-local address is refused (issue 19 item 4).
   */
  TARMAC_EGRESS_ALLOW_CIDRS: optional,

  /** Each sandbox's writable layer, MB (engine default 4096); past it, ENOSPC inside (issue 19 item 5). */
  TARMAC_SANDBOX_DISK_MB: optional,
  /** Open files per sandbox process, RLIMIT_NOFILE (engine default 4096; issue 19 item 13). */
  TARMAC_SANDBOX_NOFILE: optional,
  /**
   * Live sandboxes' memory limits may sum to the host's memory times this (engine default 1: never
   * more than the host has; issue 19 item 13).
   */
  TARMAC_MEMORY_OVERCOMMIT: optional,
  /** Age before a container with no record is removed, whole seconds (60; orphan-reaper.ts). */
  TARMAC_ORPHAN_GRACE_SECONDS: optional,
  /**
   * The warm pool (issue 20; planes/sandbox/pool/ARCHITECTURE.md): `off`, or shapes
   * `<image>@<memory MB>=<size>,…`; default `tarmac/base:latest@4096=2` (the default image and memory).
   */
  TARMAC_POOL: optional,
  /**
   * How long the sandbox gateway holds a request to a sandbox that is still starting before it
   * answers 503, whole seconds (120: covers a first base-image build; issue 14 item 1).
   */
  TARMAC_SANDBOX_START_WAIT_SECONDS: optional,
  /** Most requests held at once for starting sandboxes; past it, 503 at once (1000). */
  TARMAC_SANDBOX_START_WAIT_MAX: optional,

  // Connections (issue 19 item 7; planes/sandbox/gateway/CONNECTIONS.md): caps derived from the
  // open-files limit unless set; timeouts in ms.
  TARMAC_MAX_CONNECTIONS: optional,
  TARMAC_MAX_CONNECTIONS_PER_IP: optional,
  TARMAC_EGRESS_MAX_CONNECTIONS: optional,
  TARMAC_HEADERS_TIMEOUT_MS: optional,
  TARMAC_REQUEST_TIMEOUT_MS: optional,
  TARMAC_KEEPALIVE_TIMEOUT_MS: optional,

  // Model gateway (planes/model-gateway/README.md, issue 18).
  /**
   * Private destinations model upstreams may have, comma-separated CIDRs (e.g. a vLLM server at
   * `10.0.5.0/24`); by default a model's base URL must resolve to public addresses only.
   */
  TARMAC_MODEL_UPSTREAM_ALLOW: optional,
  /** Seconds a provider has to start answering, and may stay silent mid-answer (300). */
  TARMAC_MODEL_TIMEOUT_SECONDS: optional,
  /** Retries of a provider 429/5xx or connection failure before the first byte (2). */
  TARMAC_MODEL_RETRIES: optional,
  /** Longest Retry-After honoured by a retry, seconds (10); a longer one is surfaced at once. */
  TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS: optional,
  /** Days each gateway call's record (GET /v0/models/{name}/usage) is kept, 1 to 100000 (30). */
  TARMAC_MODEL_CALL_RETENTION_DAYS: optional,
  // Jobs (planes/jobs/ARCHITECTURE.md).
  /** Task containers running at once per workspace; more wait (execution `queued`) (16). */
  TARMAC_JOBS_WORKSPACE_CAPACITY: optional,
  /** Seconds between SIGTERM and SIGKILL when an execution is cancelled (10). */
  TARMAC_JOBS_CANCEL_GRACE_SECONDS: optional,
  /** Seconds an execution may take from its creation when its request names no `timeout` (86400). */
  TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS: optional,
  // Run plane (planes/run/ARCHITECTURE.md): seconds a new replica has to listen on PORT (60), and
  // a request may be held while no replica is ready (60).
  TARMAC_RUN_READY_TIMEOUT_SECONDS: optional,
  TARMAC_RUN_HOLD_SECONDS: optional,

  // Metering (planes/metering/ARCHITECTURE.md).
  /** JSON object of price overrides, dimension → USD per unit. */
  TARMAC_METERING_PRICES: optional,
  /** Seconds between meter passes when no change notice arrives, (0, 3600]; 60. */
  TARMAC_METERING_INTERVAL_SECONDS: optional,

  // Builds (issue 15; planes/builds/README.md).
  /** Largest code upload (compressed), MB (200); larger is a 413. */
  TARMAC_BUILD_UPLOAD_MAX_MB: optional,
  /** Largest unpacked source, MB (1024). */
  TARMAC_BUILD_SOURCE_MAX_MB: optional,
  /** Lifetime of an upload URL, seconds (900). */
  TARMAC_BUILD_URL_TTL_SECONDS: optional,
  /** Memory limit of a build's RUN steps, MB (2048). */
  TARMAC_BUILD_MEMORY_MB: optional,
  /** Wall-clock limit of one build, seconds (1800). */
  TARMAC_BUILD_TIMEOUT_SECONDS: optional,
  /** Seconds between passes of the built-image garbage collector (3600). */
  TARMAC_BUILD_GC_INTERVAL_SECONDS: optional,
  /**
   * Seconds an image layer no image names is kept after its last use before the collector removes
   * it (600): another platform sharing the image store may be about to store an image naming it.
   */
  TARMAC_BUILD_LAYER_GC_GRACE_SECONDS: optional,
  /**
   * What build steps may reach (planes/builds/build-network.ts): `egress` (default: the public
   * internet through the build proxy on the sandbox bridge; never loopback, the platform, the
   * metadata address, sandboxes or private ranges unless TARMAC_EGRESS_ALLOW_CIDRS opens them),
   * `none` (no network) or `host` (the host's network, its loopback services included: only for
   * trusted tenants).
   */
  TARMAC_BUILD_NETWORK: optional.refine(
    (v) => v === undefined || (BUILD_NETWORK_MODES as readonly string[]).includes(v),
    { message: 'TARMAC_BUILD_NETWORK must be egress, none or host' },
  ),
});
export type PlatformEnv = z.infer<typeof platformEnvSchema>;

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
  jobs: { capacityPerWorkspace: number; graceSeconds: number; executionTimeoutSeconds: number };
  run: { readyTimeoutMs: number; holdMs: number };
  connections: ConnectionConfig;
  /** Where the extra trusted CAs are (TARMAC_EXTRA_CA_CERTS); `required`: a missing path is an error. */
  extraCaCerts: ExtraCaSources;
  models: ModelGatewayConfig;
  builds: BuildConfig;
}

/** The model gateway's upstream settings (issue 18). */
export interface ModelGatewayConfig {
  allowCidrs: string[];
  timeoutMs: number;
  retries: number;
  maxRetryDelayMs: number;
  /** Days a call record is kept. */
  callRetentionDays: number;
}

export interface ConfigSources {
  flags: { port?: string | undefined; host?: string | undefined; home?: string | undefined };
  env: Record<string, string | undefined>;
  homedir: string;
}

export class ConfigError extends Error {}

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
    jobs: {
      capacityPerWorkspace: boundedWholeNumber(
        e.TARMAC_JOBS_WORKSPACE_CAPACITY,
        'TARMAC_JOBS_WORKSPACE_CAPACITY',
        16,
        1,
      ),
      graceSeconds: boundedWholeNumber(
        e.TARMAC_JOBS_CANCEL_GRACE_SECONDS,
        'TARMAC_JOBS_CANCEL_GRACE_SECONDS',
        10,
        0,
      ),
      executionTimeoutSeconds: boundedWholeNumber(
        e.TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS,
        'TARMAC_JOBS_EXECUTION_TIMEOUT_SECONDS',
        86_400,
        1,
      ),
    },
    run: {
      readyTimeoutMs:
        1000 *
        boundedWholeNumber(e.TARMAC_RUN_READY_TIMEOUT_SECONDS, 'TARMAC_RUN_READY_TIMEOUT_SECONDS', 60, 1),
      holdMs: 1000 * boundedWholeNumber(e.TARMAC_RUN_HOLD_SECONDS, 'TARMAC_RUN_HOLD_SECONDS', 60, 1),
    },
    connections: resolveConnectionConfig(e),
    extraCaCerts: extraCaSources(e),
    models: {
      allowCidrs: asConfigError(() =>
        parseCidrList(e.TARMAC_MODEL_UPSTREAM_ALLOW, 'TARMAC_MODEL_UPSTREAM_ALLOW'),
      ),
      timeoutMs:
        (optionalNumber(e.TARMAC_MODEL_TIMEOUT_SECONDS, 'TARMAC_MODEL_TIMEOUT_SECONDS', 'v', {
          min: 0.001,
          integer: false,
        }).v ?? 300) * 1000,
      retries:
        optionalNumber(e.TARMAC_MODEL_RETRIES, 'TARMAC_MODEL_RETRIES', 'v', { min: 0, integer: true }).v ?? 2,
      maxRetryDelayMs:
        (optionalNumber(e.TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS, 'TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS', 'v', {
          min: 0,
          integer: false,
        }).v ?? 10) * 1000,
      callRetentionDays: boundedWholeNumber(
        e.TARMAC_MODEL_CALL_RETENTION_DAYS,
        'TARMAC_MODEL_CALL_RETENTION_DAYS',
        30,
        1,
      ),
    },
    builds: buildConfig(e),
  };
}

/** The host's local CA directory (Debian: update-ca-certificates adds what is here to the bundle). */
export const HOST_LOCAL_CA_DIR = '/usr/local/share/ca-certificates';

/**
 * TARMAC_EXTRA_CA_CERTS resolved: the operator's list (every entry must exist), or the host's
 * defaults (used when present).
 */
function extraCaSources(e: PlatformEnv): ExtraCaSources {
  const text = e.TARMAC_EXTRA_CA_CERTS?.trim();
  if (text === 'none') return { required: [], optional: [] };
  if (text) {
    const paths = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const relative = paths.find((x) => !x.startsWith('/'));
    if (relative !== undefined) {
      throw new ConfigError(`TARMAC_EXTRA_CA_CERTS: "${relative}" is not an absolute path`);
    }
    return { required: paths, optional: [] };
  }
  return {
    required: [],
    optional: [HOST_LOCAL_CA_DIR, ...(e.NODE_EXTRA_CA_CERTS ? [e.NODE_EXTRA_CA_CERTS] : [])],
  };
}

export interface ExtraCaSources {
  /** Paths named by the operator: missing or without a certificate is a ConfigError. */
  required: string[];
  /** The host's defaults: read when present. */
  optional: string[];
}

/** A whole number from `min` to 100000 (unset: `fallback`). */
function boundedWholeNumber(text: string | undefined, name: string, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 100_000) {
    throw new ConfigError(`${name} must be a whole number from ${min} to 100000, got "${text}"`);
  }
  return Number(text);
}

/** A number setting under `key`, or nothing when unset (the engine's default applies). */
function optionalNumber<K extends string>(
  text: string | undefined,
  name: string,
  key: K,
  rule: { min: number; integer: boolean },
): Partial<Record<K, number>> {
  if (text === undefined) return {};
  const n = Number(text);
  if (!Number.isFinite(n) || n < rule.min || (rule.integer && !Number.isInteger(n))) {
    const what = rule.integer ? 'a whole number' : 'a number';
    throw new ConfigError(`${name} must be ${what} of at least ${rule.min}, got "${text}"`);
  }
  return { [key]: n } as Partial<Record<K, number>>;
}

/** A whole number (0 or more) or the default when unset. */
function wholeNumber(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}

/** Whole megabytes as bytes; unset is undefined (the consumer's default). */
function megabytes(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ConfigError(`${name} must be a whole number of megabytes, got "${text}"`);
  }
  return Number(text) * 1024 * 1024;
}

/** A parser's own error (it names the variable) as a ConfigError: exit 2 with its message. */
function asConfigError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function engineConfig(e: PlatformEnv): EngineConfig {
  const standbyText = e.TARMAC_STANDBY_AFTER ?? '15s';
  const standbySeconds = lifecycleDurationSeconds(
    /^\d+$/.test(standbyText) ? `${standbyText}s` : standbyText,
  );
  if (standbySeconds === undefined || standbySeconds < 1) {
    throw new ConfigError(
      `TARMAC_STANDBY_AFTER must be seconds or a duration like 15s or 2m, got "${standbyText}"`,
    );
  }
  const graceText = e.TARMAC_ORPHAN_GRACE_SECONDS ?? '60';
  if (!/^\d+$/.test(graceText)) {
    throw new ConfigError(`TARMAC_ORPHAN_GRACE_SECONDS must be whole seconds, got "${graceText}"`);
  }
  const startWait = wholeNumber(
    e.TARMAC_SANDBOX_START_WAIT_SECONDS,
    'TARMAC_SANDBOX_START_WAIT_SECONDS',
    120,
  );
  const startWaitMax = wholeNumber(e.TARMAC_SANDBOX_START_WAIT_MAX, 'TARMAC_SANDBOX_START_WAIT_MAX', 1000);
  return {
    pool: asConfigError(() => parsePoolShapes(e.TARMAC_POOL)),
    orphanGraceMs: Number(graceText) * 1000,
    startWait: { timeoutMs: startWait * 1000, maxHeld: startWaitMax },
    limits: {
      ...optionalNumber(e.TARMAC_SANDBOX_DISK_MB, 'TARMAC_SANDBOX_DISK_MB', 'defaultDiskMB', {
        min: 64,
        integer: true,
      }),
      ...optionalNumber(e.TARMAC_SANDBOX_NOFILE, 'TARMAC_SANDBOX_NOFILE', 'nofileLimit', {
        min: 64,
        integer: true,
      }),
      ...optionalNumber(e.TARMAC_MEMORY_OVERCOMMIT, 'TARMAC_MEMORY_OVERCOMMIT', 'memoryOvercommit', {
        min: 0.01,
        integer: false,
      }),
    },
    standbyAfterMs: standbySeconds * 1000,
    imageDir: e.TARMAC_IMAGE_DIR,
    maxImageArchiveBytes: megabytes(e.TARMAC_IMAGE_MAX_ARCHIVE_MB, 'TARMAC_IMAGE_MAX_ARCHIVE_MB'),
    network: {
      ...(e.TARMAC_BRIDGE ? { bridge: e.TARMAC_BRIDGE } : {}),
      ...(e.TARMAC_SUBNET ? { subnet: e.TARMAC_SUBNET } : {}),
    },
    sandboxDomain: e.TARMAC_DOMAIN ?? 'localhost',
    sandboxdBundle: e.TARMAC_SANDBOXD_BUNDLE,
    tiniBinary: e.TARMAC_TINI ?? '/usr/bin/tini-static',
  };
}

/** Prices from a JSON object of overrides, e.g. `{"sandbox_compute_runtime_gbs": 0.00003}`. */
function prices(overridesJson: string | undefined): PriceTable {
  if (!overridesJson) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(overridesJson);
  } catch {
    throw new ConfigError('TARMAC_METERING_PRICES must be a JSON object of dimension → USD per unit');
  }
  const result = priceOverridesSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(
      `TARMAC_METERING_PRICES: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return { ...DEFAULT_PRICES, ...result.data };
}

/** `TARMAC_METERING_INTERVAL_SECONDS` → milliseconds; a positive number of seconds, default 60. */
function meteringIntervalMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_METERING_INTERVAL_SECONDS * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new ConfigError(
      `TARMAC_METERING_INTERVAL_SECONDS must be a number of seconds from 0 to 3600, got "${text}"`,
    );
  }
  return Math.round(seconds * 1000);
}

/** The URL clients use: the public override, or the listener with a wildcard host shown as localhost. */
export function baseUrl(config: Pick<PlatformConfig, 'host' | 'publicUrl'>, boundPort: number): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${boundPort}`;
}

/**
 * Connection caps and HTTP timeouts an operator may set (issue 19 item 7; defaults and the rule
 * that bounds them: framework/connection-budget.ts and framework/connection-guard.ts).
 */
export interface ConnectionConfig {
  maxConnections: number | undefined;
  maxPerAddress: number | undefined;
  egressMaxConnections: number | undefined;
  headersTimeoutMs: number | undefined;
  requestTimeoutMs: number | undefined;
  keepAliveTimeoutMs: number | undefined;
}

export function resolveConnectionConfig(env: Record<string, string | undefined>): ConnectionConfig {
  const count = (name: string, min: number): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min)
      throw new ConfigError(`${name} must be a whole number >= ${min}, got "${text}"`);
    return n;
  };
  return {
    maxConnections: count('TARMAC_MAX_CONNECTIONS', 1),
    maxPerAddress: count('TARMAC_MAX_CONNECTIONS_PER_IP', 1),
    egressMaxConnections: count('TARMAC_EGRESS_MAX_CONNECTIONS', 1),
    headersTimeoutMs: count('TARMAC_HEADERS_TIMEOUT_MS', 100),
    // 0 turns the whole-request timeout off (Node's meaning).
    requestTimeoutMs: count('TARMAC_REQUEST_TIMEOUT_MS', 0),
    keepAliveTimeoutMs: count('TARMAC_KEEPALIVE_TIMEOUT_MS', 100),
  };
}

export interface BuildConfig {
  maxUploadBytes: number;
  maxSourceBytes: number;
  urlTtlMs: number;
  memoryMB: number;
  timeoutMs: number;
  network: BuildNetworkMode;
  gcIntervalMs: number;
  layerGcGraceMs: number;
}

function buildConfig(e: PlatformEnv): BuildConfig {
  const whole = (text: string | undefined, name: string, fallback: number) => {
    const v = optionalNumber(text, name, 'v', { min: 1, integer: true }).v;
    return v ?? fallback;
  };
  return {
    maxUploadBytes: whole(e.TARMAC_BUILD_UPLOAD_MAX_MB, 'TARMAC_BUILD_UPLOAD_MAX_MB', 200) * 1024 * 1024,
    maxSourceBytes: whole(e.TARMAC_BUILD_SOURCE_MAX_MB, 'TARMAC_BUILD_SOURCE_MAX_MB', 1024) * 1024 * 1024,
    urlTtlMs: whole(e.TARMAC_BUILD_URL_TTL_SECONDS, 'TARMAC_BUILD_URL_TTL_SECONDS', 900) * 1000,
    memoryMB: whole(e.TARMAC_BUILD_MEMORY_MB, 'TARMAC_BUILD_MEMORY_MB', 2048),
    timeoutMs: whole(e.TARMAC_BUILD_TIMEOUT_SECONDS, 'TARMAC_BUILD_TIMEOUT_SECONDS', 1800) * 1000,
    network: (e.TARMAC_BUILD_NETWORK ?? 'egress') as BuildNetworkMode,
    gcIntervalMs: whole(e.TARMAC_BUILD_GC_INTERVAL_SECONDS, 'TARMAC_BUILD_GC_INTERVAL_SECONDS', 3600) * 1000,
    layerGcGraceMs:
      whole(e.TARMAC_BUILD_LAYER_GC_GRACE_SECONDS, 'TARMAC_BUILD_LAYER_GC_GRACE_SECONDS', 600) * 1000,
  };
}
