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
}

export interface ConfigSources {
  flags: { port?: string | undefined; host?: string | undefined; home?: string | undefined };
  env: Record<string, string | undefined>;
  homedir: string;
}

export class ConfigError extends Error {}

export function resolveConfig({ flags, env, homedir }: ConfigSources): PlatformConfig {
  const portText = flags.port ?? env.TARMAC_PORT ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) {
    throw new ConfigError(`--port must be a number from 0 to 65535, got "${portText}"`);
  }
  const databaseUrl = env.TARMAC_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('TARMAC_DATABASE_URL must be a postgres:// URL (SQLite is the default without it)');
  }
  return {
    home: flags.home ?? env.TARMAC_HOME ?? `${homedir}/.tarmac`,
    host: flags.host ?? env.TARMAC_HOST ?? '127.0.0.1',
    port,
    databaseUrl,
    publicUrl: env.TARMAC_PUBLIC_URL || undefined,
    logLevel: env.TARMAC_LOG_LEVEL ?? 'info',
  };
}

/** The URL clients use: the public override, or the listener with a wildcard host shown as localhost. */
export function baseUrl(config: PlatformConfig, boundPort: number): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${boundPort}`;
}

/**
 * Connection caps and HTTP timeouts an operator may set (issue 19 item 7; defaults and the rule
 * that bounds them: shared/connection-budget.ts and shared/connection-guard.ts).
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
