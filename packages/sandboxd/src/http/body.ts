// JSON request bodies (reference sandbox-api.md §1.1): a parse failure is 400
// "invalid request body: …", and so is a body that does not match the route's schema.
import { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { $ZodType, output } from 'zod/v4/core';
import { safeParse } from 'zod/mini';
import { badRequest, HttpError } from './errors.js';
import { LIMITS } from './limits.js';

/**
 * The body as text, refused with 413 past `cap` bytes (declared or received): a client cannot make
 * sandboxd buffer an unbounded body (issue 19 item 6).
 */
export async function readTextCapped(req: Request, cap: number = LIMITS.jsonBodyBytes): Promise<string> {
  const declared = req.headers.get('content-length');
  // A declared length is the whole body (node's parser delivers no more than it says): read in
  // one go, which @hono/node-server does straight from the socket, not through the WHATWG stream
  // that reading `req.body` builds (a whole undici Request, ~0.3 ms of every exec on the 2-core
  // host; issue 20). Chunked bodies are counted as they come, below.
  if (declared !== null && req.headers.get('transfer-encoding') === null && Number(declared) <= cap) {
    try {
      return await req.text();
    } catch (err) {
      throw badRequest(`invalid request body: ${(err as Error).message}`);
    }
  }
  return (await readBytesCapped(req, cap)).toString('utf8');
}

/** The body as bytes, refused with 413 past `cap` bytes (declared or received). */
export async function readBytesCapped(req: Request, cap: number): Promise<Buffer> {
  const tooLarge = (): HttpError => new HttpError(413, `request body too large: the limit is ${cap} bytes`);
  if (Number(req.headers.get('content-length') ?? 0) > cap) throw tooLarge();
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let r: Awaited<ReturnType<typeof reader.read>>;
    try {
      r = await reader.read();
    } catch (err) {
      throw badRequest(`invalid request body: ${(err as Error).message}`);
    }
    if (r.done) break;
    size += r.value.byteLength;
    if (size > cap) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(r.value);
  }
  return Buffer.concat(chunks);
}

/**
 * Drops a request whose body stalls for `LIMITS.bodyIdleMs` (issue 19 item 6): node's own request
 * timeout is off so that long uploads work. Returns the undo, called once the body is read.
 */
export function guardBodyIdle(
  incoming: IncomingMessage | undefined,
  idleMs: number = LIMITS.bodyIdleMs,
): () => void {
  if (!incoming?.socket || incoming.complete) return () => undefined;
  const onTimeout = (): void => {
    incoming.destroy(new Error(`request body idle for ${idleMs} ms`));
  };
  incoming.on('timeout', onTimeout);
  incoming.socket.setTimeout(idleMs);
  return () => {
    incoming.off('timeout', onTimeout);
    incoming.socket?.setTimeout(0);
  };
}

/** Node's request behind a Hono context, whether or not its body was read. */
export function nodeRequest(env: unknown): IncomingMessage | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

export async function jsonBody<S extends $ZodType>(
  c: Context,
  schema: S,
  optional = false,
): Promise<output<S>> {
  const unguard = guardBodyIdle(nodeRequest(c.env));
  const text = await readTextCapped(c.req.raw).finally(unguard);
  let raw: unknown;
  if (text.trim() === '' && optional) raw = {};
  else {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw badRequest(`invalid request body: ${(err as Error).message}`);
    }
  }
  const parsed = safeParse(schema, raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw badRequest(`invalid request body: ${where}${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** `?name=true` style booleans. */
export const queryFlag = (v: string | undefined): boolean => v === 'true' || v === '1';

/** Integer query parameter with a default; 400 when present but not an integer. */
export function queryInt(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === '') return fallback;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid ${name}: ${v}`);
  return Number(v);
}

/** Comma-separated list; `undefined` when absent (so callers can apply defaults). */
export function queryList(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
