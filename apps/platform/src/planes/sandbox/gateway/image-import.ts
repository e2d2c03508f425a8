/**
 * `POST /v0/images/import` (contract `imageImportRoutes`): a raw image archive streamed to disk
 * and imported into the engine's image store. Served by its own small management app — same
 * pipeline, auth and error handler as the management API (server-kit), but without its 1 MiB body
 * limit, since archives are hundreds of MB — and dispatched at the listener like sandbox traffic.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { randomBytes } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import { imageImportQuerySchema, imageImportRoutes, type ImageImportResult } from '@tarmac/contract';
import { DEFAULT_IMPORT_LIMITS, InvalidImageError, type Engine } from '@tarmac/engine';
import {
  ApiError,
  createManagementApp,
  parseOrThrow,
  requirePrincipal,
  requireWorkspace,
  type Authenticator,
  type WorkspaceResolver,
} from '@tarmac/server-kit';
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Logger } from 'pino';
import type { SandboxImages } from '../sandbox-images.js';

const ACCEPTED = ['application/x-tar', 'application/octet-stream', 'application/gzip', 'application/x-gzip'];

export interface ImageImportDeps {
  engine: Pick<Engine, 'importImage'>;
  /** Where the workspace's ref is stored in the engine (images are per workspace, issue 19 item 2). */
  images: Pick<SandboxImages, 'importTarget' | 'displayRef'>;
  /** Larger uploads are a 413 while streaming, before the disk fills (default: the engine's limit). */
  maxArchiveBytes?: number;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  logger: Logger;
  /** Where uploads are spooled (under TARMAC_HOME, on the image store's filesystem). */
  spoolDir: string;
}

export function imageImportApp(d: ImageImportDeps) {
  const route = imageImportRoutes.importImage;
  const max = d.maxArchiveBytes ?? DEFAULT_IMPORT_LIMITS.maxArchiveBytes;
  // The body is bounded here while it streams to disk (never buffered): see `capped`.
  const app = createManagementApp({ logger: d.logger, maxBodyBytes: null });
  app.post(route.path, async (c) => {
    c.set('routePath', route.path);
    const principal = await requirePrincipal(c, d.authenticator);
    const access = await requireWorkspace(c, principal, d.workspaces, route.role);
    const { ref } = parseOrThrow(imageImportQuerySchema, c.req.query(), 'query');
    const target = await d.images.importTarget(access.name, ref);
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!ACCEPTED.includes(type)) {
      throw new ApiError('unsupported_media_type', `Content-Type must be application/x-tar, got "${type}"`);
    }
    const body = c.req.raw.body;
    if (!body) throw new ApiError('validation_error', 'body: the image archive is missing');
    if (Number(c.req.header('content-length') ?? 0) > max) throw tooLarge(max);
    await mkdir(d.spoolDir, { recursive: true });
    const spool = join(d.spoolDir, `import-${randomBytes(8).toString('hex')}.tar`);
    try {
      await pipeline(
        Readable.fromWeb(body as WebReadableStream<Uint8Array>),
        capped(max),
        createWriteStream(spool),
      );
      const info = await d.engine.importImage(spool, target).catch((err: unknown) => {
        if (err instanceof InvalidImageError) {
          throw new ApiError('validation_error', `body: ${err.message}`, {
            details: [{ field: 'body', message: err.message }],
          });
        }
        throw err;
      });
      const result: ImageImportResult = {
        ref: d.images.displayRef(info.ref),
        layers: info.layers,
        createdAt: info.createdAt,
      };
      return c.json(result);
    } finally {
      await rm(spool, { force: true });
    }
  });
  const listener = getRequestListener(app.fetch);
  return {
    matches: (req: IncomingMessage) => req.method === 'POST' && (req.url ?? '').split('?')[0] === route.path,
    listener: listener as RequestListener,
  };
}

function tooLarge(max: number): ApiError {
  return new ApiError('payload_too_large', `body: the image archive is larger than ${max} bytes`);
}

/** Passes bytes through until more than `max` went by, then fails the stream (a chunked body has no length to check first). */
function capped(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > max ? tooLarge(max) : null, chunk);
    },
  });
}
