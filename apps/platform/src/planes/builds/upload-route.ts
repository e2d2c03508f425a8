import type { IncomingMessage, RequestListener } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { getRequestListener } from '@hono/node-server';
import { ApiError, createManagementApp } from '@tarmac/server-kit';
import type { Logger } from 'pino';
import { UPLOAD_PATH, type BuildsService } from './builds.service.js';

/**
 * `PUT /v0/builds/uploads/{token}`: where an upload URL points (reference §3.3 step 5: the CLI
 * PUTs the zip, success is 200). The signed token is the credential, so there is no bearer; the
 * body is streamed to disk with its own cap (the management app's 1 MiB limit does not apply),
 * which is why this is a raw route at the listener, like image import.
 */
export function uploadRoute(builds: BuildsService, logger: Logger) {
  const app = createManagementApp({ logger, maxBodyBytes: null });
  app.put(`${UPLOAD_PATH}:token`, async (c) => {
    c.set('routePath', `${UPLOAD_PATH}{token}`);
    const body = c.req.raw.body;
    if (!body) throw new ApiError('validation_error', 'body: the archive is missing');
    const result = await builds.receive(
      c.req.param('token'),
      Readable.fromWeb(body as WebReadableStream<Uint8Array>),
    );
    return c.json({ message: 'Upload received; building', buildId: result.buildId });
  });
  const listener = getRequestListener(app.fetch);
  return {
    matches: (req: IncomingMessage) => (req.url ?? '').startsWith(UPLOAD_PATH),
    listener: listener as RequestListener,
  };
}
