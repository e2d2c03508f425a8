/**
 * Delivers an async request's result to the trigger's `callbackUrl` (reference control-plane.md
 * §5.3): a signed POST (callback-signature.ts), retried with backoff — 1 s, 2 s, 4 s … capped at
 * 60 s — after a connection failure or a non-2xx answer, at most `retry` times after the first
 * attempt, each attempt bounded by ATTEMPT_TIMEOUT_MS. No redirect is followed.
 *
 * The destination guard is the model gateway's (framework/destinations): public addresses only,
 * unless the operator's TARMAC_CALLBACK_ALLOW lists more; the platform's own port never, whatever
 * the list says (the strict guard); every address a name resolves to is checked, and the
 * connection goes to the checked address (no DNS rebinding). `check` runs the same guard before
 * a request is accepted, so a refused callbackUrl is a 403 to the caller, not a silent loss.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import {
  guardedLookup,
  type DestinationGuard,
  type Lookup,
} from '../../../framework/destinations/destination-guard.js';
import { lookup as dnsLookup } from 'node:dns';
import { signCallback, type CallbackPayload } from './callback-signature.js';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const MAX_BACKOFF_MS = 60_000;

export interface CallbackSenderDeps {
  guard: DestinationGuard;
  /** The same guard without the allow-list: applies on the platform's own port. */
  strictGuard: DestinationGuard;
  selfPort: () => number | undefined;
  resolve?: Lookup;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Backoff before retry n (1-based); default 1 s × 2^(n-1) capped at MAX_BACKOFF_MS. */
  backoffMs?: (n: number) => number;
}

export type Delivery =
  | { delivered: true; attempts: number; status: number }
  | { delivered: false; attempts: number; reason: string };

export class CallbackRefused extends Error {}

export class CallbackSender {
  private readonly resolve: Lookup;

  constructor(private readonly d: CallbackSenderDeps) {
    this.resolve = d.resolve ?? (dnsLookup as unknown as Lookup);
  }

  /** Throws CallbackRefused when the URL may not be called (scheme, or every address blocked). */
  async check(url: string): Promise<void> {
    const u = parse(url);
    const blocks = this.blocker(u);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) {
      if (blocks(host)) throw refused();
      return;
    }
    await new Promise<void>((resolve, reject) =>
      guardedLookup(blocks, this.resolve)(host, { all: true }, (err) =>
        err ? reject((err as NodeJS.ErrnoException).code === 'EBLOCKED' ? refused() : err) : resolve(),
      ),
    );
  }

  async deliver(
    url: string,
    secret: string | undefined,
    payload: CallbackPayload,
    retry: number,
    signal: AbortSignal,
  ): Promise<Delivery> {
    const body = JSON.stringify(payload);
    let reason = '';
    for (let attempt = 1; ; attempt++) {
      try {
        const status = await this.once(url, secret, body, payload, signal);
        if (status >= 200 && status < 300) return { delivered: true, attempts: attempt, status };
        reason = `answered ${status}`;
      } catch (err) {
        if (err instanceof CallbackRefused)
          return { delivered: false, attempts: attempt, reason: err.message };
        reason = err instanceof Error ? err.message : String(err);
      }
      if (attempt > retry || signal.aborted) return { delivered: false, attempts: attempt, reason };
      const wait = (this.d.backoffMs ?? defaultBackoff)(attempt);
      await (this.d.sleep ?? sleep)(wait, signal);
    }
  }

  private blocker(u: URL): (address: string) => boolean {
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return (address) =>
      this.d.guard.blocks(address) || (port === this.d.selfPort() && this.d.strictGuard.blocks(address));
  }

  private once(
    url: string,
    secret: string | undefined,
    body: string,
    payload: CallbackPayload,
    signal: AbortSignal,
  ): Promise<number> {
    const u = parse(url);
    const blocks = this.blocker(u);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && blocks(host)) return Promise.reject(refused());
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'tarmac-callback/1',
      'x-blaxel-timestamp': String(payload.timestamp),
      'x-service-timestamp': String(payload.timestamp),
      'x-service-request-id': payload.request_id,
    };
    if (secret !== undefined) {
      const signature = signCallback(secret, body);
      headers['x-blaxel-signature'] = signature;
      headers['x-service-signature'] = signature;
    }
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        u,
        {
          method: 'POST',
          headers,
          signal,
          // A fresh connection per attempt: a pooled one would skip this attempt's guarded lookup.
          agent: false,
          timeout: ATTEMPT_TIMEOUT_MS,
          lookup: guardedLookup(blocks, this.resolve) as never,
        },
        (res) => {
          res.resume(); // the answer's body is not read: only its status counts
          res.once('end', () => resolve(res.statusCode ?? 0));
          res.once('error', reject);
        },
      );
      req.once('timeout', () => req.destroy(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`)));
      req.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EBLOCKED' ? refused() : err));
      req.end(body);
    });
  }
}

function parse(url: string): URL {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CallbackRefused('callbackUrl must be http or https');
  return u;
}

function refused(): CallbackRefused {
  return new CallbackRefused(
    "the trigger's callbackUrl is not a public address; an operator allows private ones with TARMAC_CALLBACK_ALLOW (the platform's own port never)",
  );
}

function defaultBackoff(n: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (n - 1));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
