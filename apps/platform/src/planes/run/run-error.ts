/**
 * The run plane's one error vocabulary and handler: `{error: string}` like the sandbox gateway's
 * (spec "Errors": data-plane errors are `{error}`), 401 with `WWW-Authenticate: Bearer`, 503 with
 * `Retry-After` when waiting can help (a replica is coming or backing off), none when it cannot
 * (disabled). Anything else is a 500 whose details stay in the log.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export class RunError extends Error {
  constructor(
    readonly status: 401 | 403 | 404 | 413 | 429 | 503,
    message: string,
    /** Seconds for Retry-After (503 only). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

function shape(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  const known = err instanceof RunError;
  const status = known ? err.status : 500;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  if (known && err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
  const body = JSON.stringify({ error: known ? err.message : 'internal error' });
  headers['content-length'] = String(Buffer.byteLength(body));
  return { status, headers, body };
}

export function sendRunError(res: ServerResponse, err: unknown): void {
  const s = shape(err);
  if (res.headersSent) return void res.destroy();
  res.writeHead(s.status, s.headers).end(s.body);
}

/** The same answer on a socket whose upgrade was refused. */
export function upgradeError(socket: Duplex, err: unknown): void {
  const s = shape(err);
  const head = Object.entries({ ...s.headers, connection: 'close' })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${s.status} Error\r\n${head}\r\n\r\n${s.body}`);
}
