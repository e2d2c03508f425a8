/**
 * An async request's two HTTP legs (async-runs.ts): reading the caller's body, bounded, and the
 * one exchange with the replica, its answer captured up to MAX_RESPONSE_BYTES.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { HOP_BY_HOP, PLATFORM_CREDENTIALS } from '../../../framework/forwarded-headers.js';
import { RunError } from '../run-error.js';
import type { Replica } from '../replica-sets.js';

export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** Request headers not forwarded (nor kept on disk): hop-by-hop and the platform's credentials. */
const DROP = new Set<string>([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'authorization',
  ...PLATFORM_CREDENTIALS,
]);

/** The caller's headers the agent gets: its own (thread id, cookies …), never the credentials. */
export function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !DROP.has(k)) out[k] = v;
  return out;
}

/** The request body, refused with 413 beyond `max` bytes (before reading it when declared). */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return Promise.reject(tooLarge(max));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.destroy();
        reject(tooLarge(max));
      } else chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

const tooLarge = (max: number) =>
  new RunError(413, `an async request body may be at most ${max} bytes (TARMAC_RUN_ASYNC_MAX_BODY_KB)`);

export interface Exchange {
  id: string;
  method: string;
  path: string;
  /** Already forwarded ones (forwardedHeaders). */
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** One HTTP exchange with the replica; the answer captured up to MAX_RESPONSE_BYTES. */
export function sendToReplica(
  replica: Replica,
  x: Exchange,
  signal: AbortSignal,
): Promise<{ status: number; body: string; length: number }> {
  const headers = { ...x.headers, 'content-length': String(x.body.length), 'x-service-request-id': x.id };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: replica.ip, port: replica.port, path: x.path, method: x.method, headers, signal },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
          if (kept < MAX_RESPONSE_BYTES) {
            const part = c.subarray(0, MAX_RESPONSE_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
        });
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 502, body: Buffer.concat(chunks).toString('utf8'), length }),
        );
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(x.body);
  });
}
