import { HEADERS, VERSION_HEADER, resolveApiVersion } from '@tarmac/contract';
import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from './context.js';
import { ApiError } from './errors.js';
import { readHeader } from './headers.js';

/** Spec "Versioning": resolve `Service-Version` (alias `Blaxel-Version`), 400 when unknown, echo the applied one. */
export function apiVersioning(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const resolution = resolveApiVersion(readHeader(c, HEADERS.version));
    if (!resolution.ok) throw new ApiError('invalid_api_version', resolution.message);
    c.set('apiVersion', resolution.version);
    c.header(VERSION_HEADER, resolution.version);
    await next();
  };
}
