// Who may drive this sandboxd (issue 19 item 3): only the platform's gateway, which proves it with
// a per-sandbox secret in header `x-tarmac-sandbox-token`. The engine puts the secret in
// sandboxd's environment (TARMAC_SANDBOXD_TOKEN, read and removed by main.ts so no process sandboxd
// starts inherits it). Without it, anything that reaches <sandbox ip>:8080 — a process on the host,
// another sandbox that got past the bridge, a forged-ARP man in the middle — could run commands as
// root here. Compared in constant time. `/health` stays open for the engine's readiness probe, but
// answers a caller without the token with `{status}` alone (uptime, process counts are not theirs).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Must match apps/platform/src/gateway/sandbox-credentials.ts. */
export const GATEWAY_TOKEN_HEADER = 'x-tarmac-sandbox-token';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether `presented` is the expected token. Hashing both first gives equal-length inputs to
 * timingSafeEqual, so neither the content nor the length of the secret leaks through timing.
 * No expected token (a bare sandboxd in tests, started without the engine) admits everyone.
 */
export function tokenMatches(
  expected: string | undefined,
  presented: string | string[] | undefined,
): boolean {
  if (expected === undefined) return true;
  if (typeof presented !== 'string' || presented.length === 0) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

export const UNAUTHORIZED_MESSAGE =
  'this sandbox API answers only the platform gateway (missing or wrong sandbox token)';

/** Wraps sandboxd's `upgrade` listener (the terminal WebSocket) with the same check. */
export function guardUpgrade(
  expected: string | undefined,
  next: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    if (tokenMatches(expected, headerOf(req.headers))) return next(req, socket, head);
    const body = JSON.stringify({ error: UNAUTHORIZED_MESSAGE });
    socket.end(
      `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}

const headerOf = (headers: IncomingHttpHeaders): string | string[] | undefined =>
  headers[GATEWAY_TOKEN_HEADER];
