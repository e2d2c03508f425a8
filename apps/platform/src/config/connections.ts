import { ConfigError } from './values.js';

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
