/**
 * How many connections each listener group may hold, derived from the process's descriptor limit
 * (issue 19 item 7) so that connections can never take the descriptors the controller, the
 * database, runc and the sandboxes' files need:
 *
 *   reserve  = max(256, limit / 4)        never used by connections
 *   public   = (limit - reserve) / 3      connections on the public listener (each may hold two
 *                                         descriptors: the client's and its upstream in a sandbox)
 *   egress   = (limit - reserve) / 6      connections on the egress proxy (client + upstream)
 *
 * so at most 2*public + 2*egress = limit - reserve descriptors are spent on connections. With the
 * usual hard limit of 1,048,576 the public cap is 20,000 by default (the DEFAULT_ values below
 * apply first); at 20,000 it is 5,000. An operator may lower any cap, or raise it up to the
 * derived ceiling (a higher value is clamped, with a warning): the way to more connections is a
 * higher `ulimit -Hn`.
 */
import type { ConnectionLimits } from './connection-guard.js';

export const DEFAULT_MAX_CONNECTIONS = 20_000;
export const DEFAULT_MAX_PER_ADDRESS = 256;
export const DEFAULT_EGRESS_MAX_CONNECTIONS = 10_000;
/** One sandbox is one address on the egress proxy. */
export const DEFAULT_EGRESS_MAX_PER_SANDBOX = 256;

export interface ConnectionSettings {
  maxConnections?: number | undefined;
  maxPerAddress?: number | undefined;
  egressMaxConnections?: number | undefined;
}

export interface ConnectionBudget {
  public: ConnectionLimits;
  egress: ConnectionLimits;
  /** What was asked for but clamped to the ceiling, for a start-up warning. */
  clamped: string[];
}

export function connectionBudget(fdLimit: number, s: ConnectionSettings = {}): ConnectionBudget {
  const reserve = Math.max(256, Math.floor(fdLimit / 4));
  const spendable = Math.max(0, fdLimit - reserve);
  const publicCeiling = Math.max(16, Math.floor(spendable / 3));
  const egressCeiling = Math.max(16, Math.floor(spendable / 6));
  const clamped: string[] = [];
  const pick = (name: string, wanted: number | undefined, fallback: number, ceiling: number) => {
    if (wanted !== undefined && wanted > ceiling) {
      clamped.push(`${name}=${wanted} lowered to ${ceiling} (descriptor limit ${fdLimit})`);
    }
    return Math.min(wanted ?? fallback, ceiling);
  };
  const maxConnections = pick(
    'TARMAC_MAX_CONNECTIONS',
    s.maxConnections,
    DEFAULT_MAX_CONNECTIONS,
    publicCeiling,
  );
  const egressMax = pick(
    'TARMAC_EGRESS_MAX_CONNECTIONS',
    s.egressMaxConnections,
    DEFAULT_EGRESS_MAX_CONNECTIONS,
    egressCeiling,
  );
  return {
    public: {
      maxConnections,
      maxPerAddress: pick(
        'TARMAC_MAX_CONNECTIONS_PER_IP',
        s.maxPerAddress,
        DEFAULT_MAX_PER_ADDRESS,
        maxConnections,
      ),
    },
    egress: { maxConnections: egressMax, maxPerAddress: Math.min(DEFAULT_EGRESS_MAX_PER_SANDBOX, egressMax) },
    clamped,
  };
}
