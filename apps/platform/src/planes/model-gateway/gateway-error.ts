/**
 * The model gateway's one error vocabulary (issue 18): every answer that is not the provider's own
 * body is OpenAI-shaped, `{error: {message, type, param, code}}`, because the callers are OpenAI
 * clients (the `openai` SDK reads `error.message` and the status). Upstream errors keep the
 * provider's status and message (adapters/*.ts extract it).
 */
import type { ServerResponse } from 'node:http';

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
  501: 'not_implemented_error',
};

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Response headers to pass on (Retry-After of an upstream 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get type(): string {
    return TYPES[this.status] ?? (this.status >= 500 ? 'api_error' : 'invalid_request_error');
  }

  body(): string {
    return JSON.stringify({
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    });
  }
}

/** A field the adapter cannot honour: 400 naming it, never a silent drop (issue 18). */
export const unsupportedField = (field: string, provider: string, why = 'is not supported') =>
  new GatewayError(400, `${field} ${why} by the ${provider} adapter`, field, 'unsupported_parameter');

export function sendError(res: ServerResponse, err: unknown): void {
  const e = err instanceof GatewayError ? err : new GatewayError(500, 'internal error in the model gateway');
  if (res.headersSent) {
    // Mid-stream: the status is gone; an SSE error event is the only thing a client can still read.
    if (!res.writableEnded) res.end(`data: ${e.body()}\n\n`);
    return;
  }
  const body = e.body();
  res.writeHead(e.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...e.headers,
  });
  res.end(body);
}
