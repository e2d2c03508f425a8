import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ServerEnv } from './context.js';

/**
 * The management API's body limit (larger: `onTooLarge` throws the 413). Hono's own middleware
 * reads `c.req.raw.body` on every request, which makes @hono/node-server build a whole WHATWG
 * Request (undici, a web stream over the socket) even for a GET, and sends the JSON body through
 * that stream instead of node-server's direct read: ~0.5 ms of a pooled create's CPU on the 2-core
 * host, profiled (issue 20 item 1). Under node the head says it all: neither Content-Length nor
 * Transfer-Encoding is no body (RFC 9112 §6.3), and node's parser never delivers more than a
 * Content-Length says. Only a chunked body, or a request that did not come through node's server
 * (in-process `app.request`), is counted as it streams, by hono's middleware.
 */
export function bodyLimitOf(maxSize: number, onTooLarge: () => never): MiddlewareHandler<ServerEnv> {
  const streamed = bodyLimit({ maxSize, onError: onTooLarge });
  return (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming || incoming.headers['transfer-encoding'] !== undefined) return streamed(c, next);
    const length = incoming.headers['content-length'];
    if (length !== undefined && Number.parseInt(length, 10) > maxSize) onTooLarge();
    return next();
  };
}
