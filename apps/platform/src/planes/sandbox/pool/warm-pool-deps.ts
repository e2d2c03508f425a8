/** What the warm pool (warm-pool.ts) is built from: the engine operations it uses and its settings. */
import type { Agent } from 'node:http';
import type { LocalEngine, SandboxSpec } from '@tarmac/engine';
import type { Logger } from 'pino';
import type { PoolShape } from './pool-shapes.js';

/** The engine operations the pool uses (LocalEngine has them all). */
export type PoolEngine = Pick<
  LocalEngine,
  | 'createSandbox'
  | 'waitReady'
  | 'freeze'
  | 'thawSync'
  | 'claim'
  | 'prepareClaim'
  | 'stopSandbox'
  | 'deleteSandbox'
  | 'list'
  | 'stats'
  | 'ensureImage'
  | 'hasImage'
>;

export interface WarmPoolDeps {
  engine: PoolEngine;
  shapes: readonly PoolShape[];
  /** The engine ref of a shape's image (built-in images resolve the same in every workspace). */
  resolveImage: (ref: string) => Promise<string | undefined>;
  /** What every sandbox gets in its env and files (egress, sandboxd token), by record id. */
  sandboxDefaults: (sandbox: {
    id: string;
    workspace: string;
    name: string;
  }) => Promise<{ env: Record<string, string>; files: SandboxSpec['files'] }>;
  /** sandboxd's token of a record id (sandbox-credentials.ts). */
  token: (recordId: string) => string;
  /** Header the token goes in. */
  tokenHeader: string;
  /**
   * The gateway's keep-alive connections to sandboxds (gateway/proxy.ts): the claim's request to
   * sandboxd leaves its connection there, so the sandbox's first request through the gateway
   * does not open one.
   */
  agent?: Agent;
  logger: Logger;
  now?: () => number;
  /** After a failed boot or a release under memory pressure, no refill for this long (30 s). */
  backoffMs?: number;
  readyTimeoutMs?: number;
  /** After a claim, no refill for this long (REFILL_DELAY_MS). */
  refillDelayMs?: number;
  /** One ready member per shape kept thawed (hot-members.ts; TARMAC_POOL_HOT); default true. */
  hot?: boolean;
  /** Between two pings of a hot member (hot-members.ts KEEP_WARM_MS). */
  keepWarmMs?: number;
  /**
   * A member is frozen only once this old (TARMAC_STANDBY_MIN_AGE; controllers/standby.ts
   * STANDBY_MIN_AGE_MS): sandboxd's start-up collections run before the freeze, not after a claim.
   */
  minAgeMs?: number;
}
