// multipart/form-data bodies streamed straight to disk with busboy (reference sandbox-api.md §1.2:
// "The multipart upload streams straight to disk"). Only the `file` part is written; other parts
// are collected as small string fields.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import busboy from 'busboy';
import { guardBodyIdle } from './body.js';
import { badRequest } from './errors.js';

export interface ReceivedFile {
  size: number;
  /** md5 hex of the content when asked for (`withMd5`), else "". */
  md5: string;
}

export interface MultipartResult {
  fields: Record<string, string>;
  /** Set when a `file` part was present; it was written to `dest`. */
  file: ReceivedFile | undefined;
}

export const isMultipart = (contentType: string | undefined): boolean =>
  (contentType ?? '').toLowerCase().startsWith('multipart/form-data');

/** Bounds on the non-file parts a client can make sandboxd hold in memory (issue 19 item 6). */
export const MULTIPART_LIMITS = { fields: 64, fieldSize: 64 * 1024, parts: 128, headerPairs: 64 };

/**
 * Streams the `file` part of `req` to `dest`; removes `dest` again on failure. `incoming` is
 * node's own request stream when the route has it (see nodeIncoming): reading it directly skips
 * two stream conversions (node → web → node) on large uploads.
 *
 * Every failure of the body (client gone mid-stream, truncated or malformed multipart, a write
 * error) ends in the one 400 thrown here: the file's write is awaited on every path, so its
 * rejection can never surface as an unhandled rejection, which used to kill sandboxd and with it
 * the sandbox (issue 19 item 6).
 */
export async function receiveMultipart(
  req: Request,
  dest: string,
  withMd5 = false,
  incoming?: Readable,
): Promise<MultipartResult> {
  const contentType = req.headers.get('content-type') ?? '';
  if (!incoming && !req.body) throw badRequest('invalid request body: empty multipart body');
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: { 'content-type': contentType }, limits: MULTIPART_LIMITS });
  } catch (err) {
    throw badRequest(`invalid request body: ${(err as Error).message}`);
  }
  const source = incoming ?? Readable.fromWeb(req.body as NodeWebStream<Uint8Array>);
  const fields: Record<string, string> = {};
  let file: ReceivedFile | undefined;
  let write: Promise<void> | undefined;
  bb.on('field', (name, value) => {
    fields[name] = value;
  });
  bb.on('file', (name, stream) => {
    if (name !== 'file' || file) {
      stream.resume();
      return;
    }
    const hash = withMd5 ? createHash('md5') : undefined;
    const received: ReceivedFile = { size: 0, md5: '' };
    file = received;
    stream.on('data', (chunk: Buffer) => {
      hash?.update(chunk);
      received.size += chunk.length;
    });
    write = pipeline(stream, createWriteStream(dest, { mode: 0o644 })).then(() => {
      received.md5 = hash?.digest('hex') ?? '';
    });
    // A failed write (disk full, directory removed) ends the request at once instead of letting
    // busboy wait on a destroyed stream; the rejection itself is awaited below.
    write.catch((err: unknown) => source.destroy(err as Error));
  });
  const unguard = guardBodyIdle(incoming instanceof IncomingMessage ? incoming : undefined);
  try {
    await pipeline(source, bb);
    await write;
  } catch (err) {
    await write?.catch(() => undefined); // the file is closed before it is removed
    await unlink(dest).catch(() => undefined);
    throw badRequest(`invalid request body: ${(err as Error).message}`);
  } finally {
    unguard();
  }
  return { fields, file };
}

/** The node request behind a Hono context, when the adapter passed it and nobody read the body. */
export function nodeIncoming(env: unknown): Readable | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof Readable && !incoming.readableDidRead ? incoming : undefined;
}

/** Node's response behind a Hono context (see nodeIncoming), for routes that stream into it. */
export function nodeOutgoing(env: unknown): ServerResponse | undefined {
  const outgoing = (env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse && !outgoing.headersSent ? outgoing : undefined;
}
