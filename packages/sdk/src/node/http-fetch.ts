import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { FetchLike } from '../http/transport.js';
import { isLocalhostName, loopbackLookup } from './localhost.js';

/**
 * A fetch over node:http/https for short-lived processes (`@tarmac/sdk/node/core`, the CLI's
 * deploy): Node's global fetch loads undici at its first use, ~20 ms of CPU before the first
 * request (issue 15 bench: a fifth of the deploy command's start). It sends what the SDK sends
 * (a method, plain-object headers, a string or bytes body, an abort signal) and answers with the
 * members the SDK reads: `ok`, `status`, `statusText`, `headers.get`, `text`, `json`,
 * `arrayBuffer`, and `body` as an async iterable of bytes (not a web ReadableStream). No redirects
 * are followed (the platform's API answers none). Socket errors reject with fetch's shape
 * (`TypeError('fetch failed')`, the error under `cause`); `*.localhost` resolves to loopback.
 */
export function httpFetch(): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(input);
    // node:https (and tls) only when a URL needs it: ~2 ms of the CLI's start otherwise.
    const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const body = init.body ?? undefined;
      if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
        reject(new TypeError('httpFetch sends string or byte bodies only'));
        return;
      }
      const req = send(
        url,
        {
          method: init.method ?? 'GET',
          headers: plainHeaders(init.headers),
          ...(init.signal ? { signal: init.signal } : {}),
          ...(isLocalhostName(url.hostname) ? { lookup: loopbackLookup } : {}),
        },
        (res) => resolve(answer(res)),
      );
      req.on('error', (err) =>
        reject(init.signal?.aborted ? err : new TypeError('fetch failed', { cause: err })),
      );
      req.end(body);
    });
  };
}

/** Plain objects and entry lists only: a Headers object has no own entries to copy. */
function plainHeaders(headers: RequestInit['headers']): OutgoingHttpHeaders | undefined {
  if (headers === undefined) return undefined;
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  const proto = Object.getPrototypeOf(headers) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw new TypeError('httpFetch takes headers as a plain object or a list of entries');
  return headers as Record<string, string>;
}

function answer(res: IncomingMessage): Response {
  const status = res.statusCode ?? 502;
  let consumed = false;
  const bytes = async (): Promise<Buffer> => {
    if (consumed) throw new TypeError('body already read');
    consumed = true;
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const like = {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? '',
    headers: {
      get: (name: string): string | null => {
        const value = res.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: res,
    text: async () => (await bytes()).toString('utf8'),
    json: async () => JSON.parse((await bytes()).toString('utf8')) as unknown,
    arrayBuffer: async () => {
      const b = await bytes();
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    },
  };
  return like as unknown as Response;
}
