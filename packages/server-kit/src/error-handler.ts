import type { ManagementErrorBody } from '@tarmac/contract';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ServerEnv } from './context.js';
import { ApiError, OAuthError } from './errors.js';

/** The one error handler of a management server: every failure leaves as `{error, code, message}`. */
export function handleError(err: Error, c: Context<ServerEnv>): Response {
  if (err instanceof OAuthError) {
    c.header('Cache-Control', 'no-store');
    if (err.code === 'invalid_client') c.header('WWW-Authenticate', 'Basic realm="tarmac"');
    return c.json({ error: err.code, error_description: err.message }, err.status as ContentfulStatusCode);
  }
  const apiError = toApiError(err);
  if (apiError.status >= 500) {
    c.var.logger?.error({ err, requestId: c.var.requestId }, 'request failed');
  }
  if (apiError.status === 401) c.header('WWW-Authenticate', 'Bearer realm="tarmac"');
  // The unread rest of a too-large body makes the connection unusable: say so, or a keep-alive
  // client reuses it and its next request fails with "other side closed".
  if (apiError.status === 413) c.header('Connection', 'close');
  const body: ManagementErrorBody & Record<string, unknown> = {
    ...apiError.extra,
    error: apiError.code,
    code: apiError.status,
    message: apiError.message,
    ...(apiError.details ? { details: apiError.details } : {}),
  };
  return c.json(body, apiError.status as ContentfulStatusCode);
}

function toApiError(err: Error): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError('payload_too_large', 'Request body too large');
    return new ApiError(err.status === 404 ? 'not_found' : 'validation_error', err.message || 'Bad request', {
      status: err.status,
    });
  }
  // Never leak internals (stack traces, SQL) to the caller; the log has them.
  return new ApiError('internal_error', 'Internal server error');
}

/** No route answered: 405 with `Allow` when the path is served for other methods, else 404. */
export function handleNotFound(c: Context<ServerEnv>, allowed: readonly string[] = []): Response {
  if (allowed.length > 0) {
    c.header('Allow', allowed.join(', '));
    return handleError(
      new ApiError(
        'method_not_allowed',
        `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(', ')}`,
      ),
      c,
    );
  }
  return handleError(new ApiError('route_not_found', `No route for ${c.req.method} ${c.req.path}`), c);
}
