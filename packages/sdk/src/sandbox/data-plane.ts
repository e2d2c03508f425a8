import type { TarmacClient } from '../client.js';
import { queryString, type QueryValue } from '../http/route-url.js';
import { readBody, type SendOptions } from '../http/transport.js';

export interface DataPlaneRequest extends Omit<SendOptions, 'url'> {
  path: string;
  query?: Record<string, QueryValue>;
}

/**
 * HTTP to one sandbox's API (`{sandbox_url}/...`): the client's headers, retries and typed errors
 * (sandboxd answers errors as `{error}`), plus any session headers (preview tokens).
 */
export class SandboxHttp {
  constructor(
    readonly baseUrl: string,
    private readonly client: TarmacClient,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  url(path: string, query?: Record<string, QueryValue>): string {
    return `${this.baseUrl}${path}${queryString(query)}`;
  }

  send(request: DataPlaneRequest): Promise<Response> {
    const { path, query, headers, ...rest } = request;
    return this.client.transport.send({
      ...rest,
      url: this.url(path, query),
      headers: { ...this.extraHeaders, ...headers },
    });
  }

  async json<T>(request: DataPlaneRequest): Promise<T> {
    return (await readBody(await this.send(request))) as T;
  }

  /** Headers for a websocket to this sandbox (auth, workspace, session token). */
  async socketHeaders(): Promise<Record<string, string>> {
    return { ...(await this.client.headers()), ...this.extraHeaders };
  }

  get webSocket() {
    return this.client.webSocket;
  }

  /** Raw fetch with the sandbox's headers, for `sandbox.fetch(port, path)`. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [key, value] of Object.entries(await this.socketHeaders())) {
      if (!headers.has(key)) headers.set(key, value);
    }
    return this.client.fetch(url, { ...init, headers });
  }
}

/** Splits a byte stream into lines (NDJSON exec, log streams, watch streams). */
export async function readLines(
  body: ReadableStream<Uint8Array> | null,
  onLine: (line: string) => void,
): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  }
  buffer += decoder.decode();
  if (buffer) onLine(buffer);
}

/**
 * Encodes a filesystem path for a `{path}` wildcard: an absolute path is sent as one
 * `%2F`-encoded segment, which sandboxd reads as absolute (reference §1.1 "Path semantics");
 * a relative path keeps its slashes and resolves against the daemon's working directory.
 */
export function encodeFsPath(path: string): string {
  if (path.startsWith('/')) return `/${encodeURIComponent(path)}`;
  return `/${path.split('/').map(encodeURIComponent).join('/')}`;
}
