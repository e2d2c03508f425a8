import { TarmacConnectionError, apiErrorFrom } from './errors.js';
import { DEFAULT_RETRY, backoffDelay, isIdempotent, sleep, type RetryPolicy } from './retry.js';

/** The one I/O dependency of the SDK; inject your own (tests, proxies, `*.localhost` resolution). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface SendOptions {
  method: string;
  url: string;
  headers?: Record<string, string> | undefined;
  /** Serialised as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** A raw body (FormData, bytes, text); wins over `json`. */
  body?: RequestInit['body'];
  signal?: AbortSignal | undefined;
  /** Return error answers instead of throwing (callers that inspect 404 themselves). */
  allowError?: boolean;
}

export interface TransportOptions {
  fetch: FetchLike;
  /** Headers added to every request (auth, workspace, version); called per attempt so tokens refresh. */
  headers: () => Promise<Record<string, string>>;
  retry?: RetryPolicy | undefined;
}

/** Reads an answer body for error reporting: JSON when it parses, else text, else undefined. */
export async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Sends requests with the shared headers, retries and error mapping. */
export class HttpTransport {
  readonly fetch: FetchLike;
  private readonly retry: RetryPolicy;
  constructor(private readonly options: TransportOptions) {
    this.fetch = options.fetch;
    this.retry = options.retry ?? DEFAULT_RETRY;
  }

  async send(request: SendOptions): Promise<Response> {
    const method = request.method.toUpperCase();
    const attempts = isIdempotent(method) ? this.retry.retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { ...(await this.options.headers()), ...request.headers };
      let body = request.body;
      if (body === undefined && request.json !== undefined) {
        body = JSON.stringify(request.json);
        headers['content-type'] ??= 'application/json';
      }
      let response: Response;
      try {
        response = await this.fetch(request.url, { method, headers, body, signal: request.signal });
      } catch (error) {
        if (request.signal?.aborted) throw error;
        if (attempt < attempts) {
          await sleep(backoffDelay(this.retry, attempt), request.signal);
          continue;
        }
        const reason = describeCause(error);
        throw new TarmacConnectionError(`${method} ${request.url} failed: ${reason}`, request.url, error);
      }
      if (response.ok || request.allowError) return response;
      throw apiErrorFrom(response.status, await readBody(response), method, request.url);
    }
  }

  /** Sends and parses a JSON answer (undefined for an empty body). */
  async json<T>(request: SendOptions): Promise<T> {
    const response = await this.send(request);
    return (await readBody(response)) as T;
  }
}

/** fetch hides the socket error under `cause`; surface it ("ECONNREFUSED 127.0.0.1:8080"). */
export function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
