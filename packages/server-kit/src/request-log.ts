import { HEADERS } from '@tarmac/contract';
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { ServerEnv } from './context.js';
import { readHeader } from './headers.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every request an id (the caller's `X-Request-Id` when well-formed), echoes it, and writes one
 * structured log line per request with method, route, status and duration.
 */
export function requestLogging(logger: Logger): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const started = performance.now();
    const offered = readHeader(c, HEADERS.requestId);
    const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    c.set('requestId', requestId);
    c.set('logger', logger);
    c.header('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      const status = c.res.status;
      logger[status >= 500 ? 'error' : 'info'](
        {
          requestId,
          method: c.req.method,
          path: c.req.path,
          route: c.var.routePath ?? null,
          status,
          durationMs,
          principal: c.var.principal?.id,
          workspace: c.var.workspace?.name,
        },
        'request',
      );
    }
  };
}
