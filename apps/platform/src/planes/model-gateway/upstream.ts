/**
 * The gateway's HTTP client to providers (issue 18): keep-alive agents (a TLS handshake per request
 * would cost more than the whole overhead budget), the destination guard on every address a name
 * resolves to (framework/destinations: public addresses only unless TARMAC_MODEL_UPSTREAM_ALLOW
 * says more; the connection goes to the checked address, so DNS rebinding gains nothing), retries
 * on 429/5xx and connection failures before the first byte reached the caller, honouring
 * Retry-After within a bound, a timeout on the response head and on idleness, and cancellation
 * when the caller goes away.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import {
  guardedLookup,
  type DestinationGuard,
  type Lookup,
} from '../../framework/destinations/destination-guard.js';
import { GatewayError } from './gateway-error.js';

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

export class Upstream {
  private readonly http = new HttpAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
  private readonly https = new HttpsAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
  private readonly sleep: (ms: number) => Promise<void>;
  /** IP-literal verdicts, kept as long as the host-address snapshot they depend on (2 s). */
  private readonly literals = new Map<string, { blocked: boolean; at: number }>();

  constructor(private readonly o: UpstreamOptions) {
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }

  /** The response (status < 400 or the last failed attempt's); throws GatewayError on no answer. */
  async send(req: UpstreamRequest, signal: AbortSignal): Promise<IncomingMessage> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.o.retries;
      let res: IncomingMessage;
      try {
        res = await this.once(req, signal);
      } catch (err) {
        if (err instanceof GatewayError || last || signal.aborted) throw this.failure(err, req.url);
        await this.sleep(backoff(attempt));
        continue;
      }
      if (last || !RETRY_STATUS.has(res.statusCode ?? 0)) return res;
      const delay = retryAfterMs(res.headers['retry-after']) ?? backoff(attempt);
      if (delay > this.o.maxRetryDelayMs) return res; // the caller decides; we do not hold it
      res.resume(); // drain: the socket goes back to the pool
      await this.sleep(delay);
      if (signal.aborted) throw new GatewayError(499, 'client closed the request');
    }
  }

  private once(r: UpstreamRequest, signal: AbortSignal): Promise<IncomingMessage> {
    const host = r.url.hostname.replace(/^\[|\]$/g, '');
    const tls = r.url.protocol === 'https:';
    const port = Number(r.url.port || (tls ? 443 : 80));
    const blocks = (address: string) =>
      this.o.guard.blocks(address) || (port === this.o.selfPort() && this.o.strictGuard.blocks(address));
    if (isIP(host) !== 0 && this.literalBlocked(host, port, blocks)) return Promise.reject(refused(r.url));
    const lookup = guardedLookup(blocks, this.o.resolve);
    return new Promise((resolve, reject) => {
      const request = (tls ? httpsRequest : httpRequest)(
        {
          host,
          port,
          path: `${r.url.pathname}${r.url.search}`,
          method: r.method,
          headers:
            r.body !== undefined ? { ...r.headers, 'content-length': Buffer.byteLength(r.body) } : r.headers,
          agent: tls ? this.https : this.http,
          lookup: lookup as never,
          servername: isIP(host) === 0 ? host : undefined,
        },
        (res) => {
          clearTimeout(timer);
          res.setTimeout(this.o.timeoutMs, () => res.destroy(new Error('upstream went idle')));
          resolve(res);
        },
      );
      const timer = setTimeout(() => {
        request.destroy();
        reject(new GatewayError(504, `the provider did not answer within ${this.o.timeoutMs} ms`));
      }, this.o.timeoutMs);
      const abort = () => request.destroy(new Error('aborted'));
      signal.addEventListener('abort', abort, { once: true });
      request.once('close', () => signal.removeEventListener('abort', abort));
      request.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(err.code === 'EBLOCKED' ? refused(r.url) : err);
      });
      request.end(r.body);
    });
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
