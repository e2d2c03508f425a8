import { describe, expect, it } from 'vitest';
import { baseUrl, ConfigError, resolveConfig, resolveConnectionConfig } from './config.js';

// Issue "Platform core" §2: one listener, default port 8080, --port, --host; data under TARMAC_HOME
// (default ~/.tarmac, --home); PostgreSQL with TARMAC_DATABASE_URL (§3).
describe('resolveConfig', () => {
  const base = { flags: {}, env: {}, homedir: '/home/ada' };

  it('defaults: port 8080 on 127.0.0.1, data in ~/.tarmac, SQLite', () => {
    expect(resolveConfig(base)).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      home: '/home/ada/.tarmac',
      databaseUrl: undefined,
    });
  });

  it('flags win over the environment, which wins over defaults', () => {
    const env = { TARMAC_HOME: '/srv/tarmac', TARMAC_PORT: '9000', TARMAC_HOST: '0.0.0.0' };
    expect(resolveConfig({ ...base, env })).toMatchObject({
      home: '/srv/tarmac',
      port: 9000,
      host: '0.0.0.0',
    });
    expect(resolveConfig({ ...base, env, flags: { home: '/tmp/h', port: '0', host: '::1' } })).toMatchObject({
      home: '/tmp/h',
      port: 0,
      host: '::1',
    });
  });

  it("TARMAC_EXTRA_CA_CERTS (issue 14 item 10): the host's extra CAs by default, the operator's list, or none", () => {
    expect(resolveConfig(base).extraCaCerts).toEqual({
      required: [],
      optional: ['/usr/local/share/ca-certificates'],
    });
    expect(resolveConfig({ ...base, env: { NODE_EXTRA_CA_CERTS: '/etc/corp.pem' } }).extraCaCerts).toEqual({
      required: [],
      optional: ['/usr/local/share/ca-certificates', '/etc/corp.pem'],
    });
    const env = { TARMAC_EXTRA_CA_CERTS: '/etc/a.pem, /etc/cas', NODE_EXTRA_CA_CERTS: '/etc/corp.pem' };
    expect(resolveConfig({ ...base, env }).extraCaCerts).toEqual({
      required: ['/etc/a.pem', '/etc/cas'],
      optional: [],
    });
    expect(resolveConfig({ ...base, env: { TARMAC_EXTRA_CA_CERTS: 'none' } }).extraCaCerts).toEqual({
      required: [],
      optional: [],
    });
    expect(() => resolveConfig({ ...base, env: { TARMAC_EXTRA_CA_CERTS: 'certs/a.pem' } })).toThrow(
      /TARMAC_EXTRA_CA_CERTS: "certs\/a.pem" is not an absolute path/,
    );
  });

  it('takes a postgres:// TARMAC_DATABASE_URL and refuses other URLs', () => {
    const url = 'postgres://u:p@db:5432/tarmac';
    expect(resolveConfig({ ...base, env: { TARMAC_DATABASE_URL: url } }).databaseUrl).toBe(url);
    expect(() => resolveConfig({ ...base, env: { TARMAC_DATABASE_URL: 'mysql://x' } })).toThrow(ConfigError);
  });

  it.each(['-1', '65536', 'http', '80.5', ''])('refuses --port %j naming the flag', (port) => {
    expect(() => resolveConfig({ ...base, flags: { port } })).toThrow(/--port/);
  });

  it('shows wildcard hosts as localhost and brackets IPv6 in the base URL', () => {
    const config = resolveConfig(base);
    expect(baseUrl({ ...config, host: '0.0.0.0' }, 8080)).toBe('http://localhost:8080');
    expect(baseUrl({ ...config, host: '::1' }, 81)).toBe('http://[::1]:81');
    expect(baseUrl({ ...config, publicUrl: 'https://tarmac.example.com/' }, 1)).toBe(
      'https://tarmac.example.com',
    );
  });
});

// Issue 19 item 7: connection caps and HTTP timeouts, operator-set through the environment.
describe('resolveConnectionConfig', () => {
  it('unset means the defaults; numbers are read; garbage names the variable', () => {
    expect(resolveConnectionConfig({})).toEqual({
      maxConnections: undefined,
      maxPerAddress: undefined,
      egressMaxConnections: undefined,
      headersTimeoutMs: undefined,
      requestTimeoutMs: undefined,
      keepAliveTimeoutMs: undefined,
    });
    expect(
      resolveConnectionConfig({ TARMAC_MAX_CONNECTIONS_PER_IP: '32', TARMAC_REQUEST_TIMEOUT_MS: '0' }),
    ).toMatchObject({ maxPerAddress: 32, requestTimeoutMs: 0 });
    expect(() => resolveConnectionConfig({ TARMAC_MAX_CONNECTIONS: 'lots' })).toThrow(
      /TARMAC_MAX_CONNECTIONS/,
    );
    expect(() => resolveConnectionConfig({ TARMAC_HEADERS_TIMEOUT_MS: '5' })).toThrow(ConfigError);
  });
});

// Issue 19 item 8: the orphan reaper's grace is an operator setting, 60 s by default.
describe('resolveConfig: TARMAC_ORPHAN_GRACE_SECONDS', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it('defaults to 60 s, reads whole seconds, names the variable on garbage', () => {
    expect(at({}).engine.orphanGraceMs).toBe(60_000);
    expect(at({ TARMAC_ORPHAN_GRACE_SECONDS: '5' }).engine.orphanGraceMs).toBe(5000);
    expect(() => at({ TARMAC_ORPHAN_GRACE_SECONDS: '-1' })).toThrow(ConfigError);
    expect(() => at({ TARMAC_ORPHAN_GRACE_SECONDS: '1m' })).toThrow(/TARMAC_ORPHAN_GRACE_SECONDS/);
  });
});

// Issue 18: how long the model gateway's per-call records (GET /v0/models/{name}/usage) are kept.
describe('resolveConfig: TARMAC_MODEL_CALL_RETENTION_DAYS', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it('defaults to 30 days, reads whole days from 1, names the variable on garbage', () => {
    expect(at({}).models.callRetentionDays).toBe(30);
    expect(at({ TARMAC_MODEL_CALL_RETENTION_DAYS: '7' }).models.callRetentionDays).toBe(7);
    expect(() => at({ TARMAC_MODEL_CALL_RETENTION_DAYS: '0' })).toThrow(/TARMAC_MODEL_CALL_RETENTION_DAYS/);
    expect(() => at({ TARMAC_MODEL_CALL_RETENTION_DAYS: '1.5' })).toThrow(ConfigError);
  });
});

describe('resolveConfig: sandbox limits (issue 19 items 5 and 13)', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it('leaves the engine its defaults when nothing is set', () => {
    expect(at({}).engine.limits).toEqual({});
  });

  it('passes disk, open files and overcommit through', () => {
    expect(
      at({ TARMAC_SANDBOX_DISK_MB: '2048', TARMAC_SANDBOX_NOFILE: '1024', TARMAC_MEMORY_OVERCOMMIT: '1.5' })
        .engine.limits,
    ).toEqual({ defaultDiskMB: 2048, nofileLimit: 1024, memoryOvercommit: 1.5 });
  });

  it('refuses values that cannot be limits, naming the variable', () => {
    expect(() => at({ TARMAC_SANDBOX_DISK_MB: '10' })).toThrow(/TARMAC_SANDBOX_DISK_MB/);
    expect(() => at({ TARMAC_SANDBOX_DISK_MB: '1.5e3x' })).toThrow(ConfigError);
    expect(() => at({ TARMAC_SANDBOX_NOFILE: '100.5' })).toThrow(/TARMAC_SANDBOX_NOFILE/);
    expect(() => at({ TARMAC_MEMORY_OVERCOMMIT: '0' })).toThrow(/TARMAC_MEMORY_OVERCOMMIT/);
  });
});

// Issue 15 "Builds": build steps reach the public internet through the build proxy by default.
describe('resolveConfig: TARMAC_BUILD_NETWORK', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it('defaults to egress, takes none and host, names the variable otherwise', () => {
    expect(at({}).builds.network).toBe('egress');
    expect(at({ TARMAC_BUILD_NETWORK: 'none' }).builds.network).toBe('none');
    expect(at({ TARMAC_BUILD_NETWORK: 'host' }).builds.network).toBe('host');
    expect(() => at({ TARMAC_BUILD_NETWORK: 'bridge' })).toThrow(/TARMAC_BUILD_NETWORK/);
  });
});

// Issue 20: one warm pool member per shape kept thawed ("hot") by default; 0 keeps all frozen.
describe('resolveConfig: TARMAC_POOL_HOT', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it('defaults to on, takes 1 and 0, names the variable otherwise', () => {
    expect(at({}).engine.poolHot).toBe(true);
    expect(at({ TARMAC_POOL_HOT: '1' }).engine.poolHot).toBe(true);
    expect(at({ TARMAC_POOL_HOT: '0' }).engine.poolHot).toBe(false);
    expect(() => at({ TARMAC_POOL_HOT: 'yes' })).toThrow(/TARMAC_POOL_HOT/);
  });
});

// Issue 20: no sandbox is frozen before sandboxd's start-up collections (standby.ts).
describe('resolveConfig: TARMAC_STANDBY_MIN_AGE', () => {
  const at = (env: Record<string, string>) => resolveConfig({ flags: {}, env, homedir: '/home/ada' });
  it("leaves the controller's default unset, reads seconds and durations, names the variable otherwise", () => {
    expect(at({}).engine.standbyMinAgeMs).toBeUndefined();
    expect(at({ TARMAC_STANDBY_MIN_AGE: '0' }).engine.standbyMinAgeMs).toBe(0);
    expect(at({ TARMAC_STANDBY_MIN_AGE: '12s' }).engine.standbyMinAgeMs).toBe(12_000);
    expect(at({ TARMAC_STANDBY_MIN_AGE: '1m' }).engine.standbyMinAgeMs).toBe(60_000);
    expect(() => at({ TARMAC_STANDBY_MIN_AGE: '-1' })).toThrow(/TARMAC_STANDBY_MIN_AGE/);
    expect(() => at({ TARMAC_STANDBY_MIN_AGE: 'soon' })).toThrow(/TARMAC_STANDBY_MIN_AGE/);
  });
});
