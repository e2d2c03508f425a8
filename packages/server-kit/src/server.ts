import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ServerEnv } from './context.js';
import { allowedMethodsOf } from './allowed-methods.js';
import { bodyLimitOf } from './body-limit.js';
import { handleError, handleNotFound } from './error-handler.js';
import { ApiError } from './errors.js';
import { requestLogging } from './request-log.js';
import { apiVersioning } from './versioning.js';

export interface ManagementServerOptions {
  logger: Logger;
  /**
   * Largest accepted request body (bytes); larger is a 413. `null`: no limit here, for a route that
   * streams its body and bounds it itself (hono's limit buffers a chunked body whole in memory).
   */
  maxBodyBytes?: number | null;
}

/**
 * A Hono app with the management plane's pipeline: request id and access log, body limit, API
 * version resolution, the one error handler, and 404 (unknown path) or 405
 * with `Allow` (known path, wrong method) in the same error shape.
 */
export function createManagementApp(options: ManagementServerOptions): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  app.use(requestLogging(options.logger));
  if (options.maxBodyBytes !== null) {
    const maxSize = options.maxBodyBytes ?? 1024 * 1024;
    app.use(
      bodyLimitOf(maxSize, () => {
        throw new ApiError('payload_too_large', `Request body larger than ${maxSize} bytes`);
      }),
    );
  }
  app.use(apiVersioning());
  app.onError(handleError);
  const allowedMethods = allowedMethodsOf(app);
  app.notFound((c) => handleNotFound(c, allowedMethods(c.req.path)));
  return app;
}
