import { z } from 'zod';
import { BUILD_NETWORK_MODES } from '../planes/builds/build-network.js';

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
  /**
   * No sandbox is frozen younger than this, however idle: seconds or a duration; 10 s (sandboxd's
   * start-up collections run first; planes/sandbox/controllers/standby.ts).
   */
  TARMAC_STANDBY_MIN_AGE: optional,
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
   * `1` (default): one ready member per pool shape is kept thawed, its sandboxd connection open,
   * so a create it serves waits for no thaw (planes/sandbox/pool/hot-members.ts); `0`: all frozen.
   */
  TARMAC_POOL_HOT: optional,
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
  // a request may be held while no replica is ready (60); idle seconds before a replica is frozen
  // in STANDBY (30) and before it is stopped, scale to zero (900); 0 turns a step off.
  TARMAC_RUN_READY_TIMEOUT_SECONDS: optional,
  TARMAC_RUN_HOLD_SECONDS: optional,
  /** Async requests (http-async triggers, `?async=true`) running at once per workspace (4). */
  TARMAC_RUN_ASYNC_CONCURRENCY: optional,
  /** Async requests waiting per workspace beyond those running (100); more is a 429. */
  TARMAC_RUN_ASYNC_QUEUE: optional,
  /** Largest async request body, KiB (1024); larger is a 413. */
  TARMAC_RUN_ASYNC_MAX_BODY_KB: optional,
  /**
   * Private destinations async-request callbacks may have, comma-separated CIDRs (like
   * TARMAC_MODEL_UPSTREAM_ALLOW); by default a callbackUrl must resolve to public addresses only.
   */
  TARMAC_CALLBACK_ALLOW: optional,
  TARMAC_RUN_STANDBY_AFTER_SECONDS: optional,
  // CPU cores a starting replica may use until it answers (1; 0: only its memory's share).
  TARMAC_RUN_STARTUP_CPU_CORES: optional,
  TARMAC_RUN_STOP_AFTER_SECONDS: optional,
  // The run plane's autoscaler (planes/run/autoscaler.ts): concurrent requests per replica (10),
  // stable and panic windows in seconds (60, 6), most replicas per revision (10).
  TARMAC_RUN_TARGET_CONCURRENCY: optional,
  TARMAC_RUN_STABLE_WINDOW_SECONDS: optional,
  TARMAC_RUN_PANIC_WINDOW_SECONDS: optional,
  TARMAC_RUN_MAX_REPLICAS: optional,

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
  TARMAC_BUILD_CACHE_MAX_AGE_HOURS: optional,
  TARMAC_BUILD_CACHE_MAX_GB: optional,
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
