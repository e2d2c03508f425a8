/**
 * The gateway's HTTP client to providers (issue 18): an undici connection pool per provider origin
 * with keep-alive (a TLS handshake per request would cost more than the whole overhead budget; and
 * undici's client costs about half the CPU per request of node:http's ClientRequest and Agent,
 * which the 64-client throughput goal needs — bench/model-gateway.ts), the destination guard on
 * every address a name resolves to (framework/destinations: public addresses only unless
 * TARMAC_MODEL_UPSTREAM_ALLOW says more; the connection goes to the checked address, so DNS
 * rebinding gains nothing), retries on 429/5xx and connection failures before the first byte
 * reached the caller, honouring Retry-After within a bound, a timeout on the response head and on
 * idleness, and cancellation when the caller goes away.
 */
import { isIP } from 'node:net';
import { Pool } from 'undici';
import {
  guardedLookup,
  type DestinationGuard,
  type Lookup,
} from '../../framework/destinations/destination-guard.js';
import { GatewayError } from './gateway-error.js';
import { dispatch, type UpstreamResponse } from './upstream-response.js';

export type { UpstreamResponse } from './upstream-response.js';
export { Cancellation, type CancelSignal } from './cancellation.js';
import type { CancelSignal } from './cancellation.js';

export interface UpstreamOptions {
  guard: DestinationGuard;
  /** The same guard without the operator allow-list: the platform's own port is never reachable. */
  strictGuard: DestinationGuard;
  /** The platform's listener port (known after listening). */
  selfPort: () => number | undefined;
  /** Retries after the first attempt (429/5xx/connection failure, before the first byte). */
  retries: number;
  /** Longest Retry-After honoured; a longer one is surfaced to the caller at once. */
  maxRetryDelayMs: number;
  /** Response head must arrive within this, and a response may not go idle longer. */
  timeoutMs: number;
  resolve?: Lookup;
  sleep?: (ms: number) => Promise<void>;
}

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
/** Connections per provider origin (node:http's Agent had the same cap). */
const CONNECTIONS = 256;
/** Origins with a pool; beyond it the oldest pool closes (its idle connections go). */
const MAX_POOLS = 1000;

export class Upstream {
  private readonly pools = new Map<string, Pool>();
  private readonly sleep: (ms: number) => Promise<void>;
  /** IP-literal verdicts, kept as long as the host-address snapshot they depend on (2 s). */
  private readonly literals = new Map<string, { blocked: boolean; at: number }>();

  constructor(private readonly o: UpstreamOptions) {
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  close(): void {
    for (const pool of this.pools.values()) void pool.destroy().catch(() => undefined);
    this.pools.clear();
  }

  /** The response (status < 400 or the last failed attempt's); throws GatewayError on no answer. */
  async send(req: UpstreamRequest, signal: CancelSignal): Promise<UpstreamResponse> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.o.retries;
      let res: UpstreamResponse;
      try {
        res = await this.once(req, signal);
      } catch (err) {
        if (err instanceof GatewayError || last || signal.aborted) throw this.failure(err, req.url);
        await this.sleep(backoff(attempt));
        continue;
      }
      if (last || !RETRY_STATUS.has(res.statusCode)) return res;
      const delay = retryAfterMs(res.headers['retry-after']) ?? backoff(attempt);
      if (delay > this.o.maxRetryDelayMs) return res; // the caller decides; we do not hold it
      await res.body.dump().catch(() => undefined); // the connection goes back to the pool
      await this.sleep(delay);
      if (signal.aborted) throw new GatewayError(499, 'client closed the request');
    }
  }

  private async once(r: UpstreamRequest, signal: CancelSignal): Promise<UpstreamResponse> {
    const t = target(r.url);
    if (t.literal !== undefined && this.literalBlocked(t.literal, t.port, (a) => this.blocks(a, t.port)))
      throw refused(r.url);
    try {
      return await dispatch(
        this.pool(r.url, t),
        { path: t.path, method: r.method as 'POST', headers: r.headers, body: r.body ?? null },
        signal,
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EBLOCKED') throw refused(r.url);
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
        throw new GatewayError(504, `the provider did not answer within ${this.o.timeoutMs} ms`);
      throw err;
    }
  }

  private blocks(address: string, port: number): boolean {
    return this.o.guard.blocks(address) || (port === this.o.selfPort() && this.o.strictGuard.blocks(address));
  }

  /** The keep-alive pool of the URL's origin; every connection it opens resolves through the guard. */
  private pool(url: URL, t: Target): Pool {
    const origin = t.origin;
    let pool = this.pools.get(origin);
    if (pool) return pool;
    const port = t.port;
    pool = new Pool(origin, {
      connections: CONNECTIONS,
      headersTimeout: this.o.timeoutMs,
      bodyTimeout: this.o.timeoutMs,
      connect: {
        timeout: this.o.timeoutMs,
        lookup: guardedLookup((address) => this.blocks(address, port), this.o.resolve) as never,
      },
    });
    if (this.pools.size >= MAX_POOLS) {
      const [oldest, old] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldest);
      void old.close().catch(() => undefined);
    }
    this.pools.set(origin, pool);
    return pool;
  }

  private literalBlocked(host: string, port: number, blocks: (address: string) => boolean): boolean {
    const key = `${host}|${port}`;
    const now = performance.now();
    const hit = this.literals.get(key);
    if (hit && now - hit.at < 2000) return hit.blocked;
    if (this.literals.size > 1000) this.literals.clear();
    const blocked = blocks(host);
    this.literals.set(key, { blocked, at: now });
    return blocked;
  }

  private failure(err: unknown, url: URL): GatewayError {
    if (err instanceof GatewayError) return err;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    return new GatewayError(
      502,
      `could not reach the provider at ${url.host} (${code || 'connection failed'})`,
    );
  }
}

/** What a request needs of its URL, read once per URL object (a model's chat URL is cached). */
interface Target {
  origin: string;
  port: number;
  /** Path and query. */
  path: string;
  /** The host when it is an IP literal (checked here: no lookup guards it), without brackets. */
  literal: string | undefined;
}

const targets = new WeakMap<URL, Target>();

/** Read when first used: a URL object handed in is not changed afterwards (adapters build new ones). */
function target(url: URL): Target {
  let t = targets.get(url);
  if (t) return t;
  const host = url.hostname;
  const literal = host.startsWith('[') || isIP(host) !== 0 ? host.replace(/^\[|\]$/g, '') : undefined;
  t = {
    origin: `${url.protocol}//${url.host}`,
    port: portOf(url),
    path: `${url.pathname}${url.search}`,
    literal,
  };
  targets.set(url, t);
  return t;
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

function refused(url: URL): GatewayError {
  return new GatewayError(
    403,
    `the model's upstream ${url.host} is not a public address; an operator allows private ones with TARMAC_MODEL_UPSTREAM_ALLOW`,
    null,
    'upstream_address_refused',
  );
}

function backoff(attempt: number): number {
  return Math.min(2000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
