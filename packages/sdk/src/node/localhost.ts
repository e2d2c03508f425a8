import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { FetchLike } from '../http/transport.js';

/**
 * `*.localhost` is loopback by RFC 6761, but glibc's resolver does not know that, so host-style
 * sandbox and preview URLs (`sbx-web-default.local.localhost:8080`) would fail with ENOTFOUND.
 * We resolve those names ourselves and let everything else take the normal path.
 */
export function isLocalhostName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost');
}

export const loopbackLookup: LookupFunction = (hostname, options, callback) => {
  if (!isLocalhostName(hostname)) {
    callback(new Error(`loopbackLookup only resolves *.localhost, not ${hostname}`), '', 4);
    return;
  }
  if (options.all) {
    (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  } else callback(null, '127.0.0.1', 4);
};

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  return headers;
}

/** A fetch that sends `*.localhost` requests to 127.0.0.1 (keeping the Host header) and the rest to `base`. */
export function localhostFetch(base: FetchLike = (input, init) => fetch(input, init)): FetchLike {
  return async (input, init) => {
    const url = new URL(input);
    if (!url.hostname.endsWith('.localhost')) return base(input, init);
    const request = new Request(url, init);
    const method = request.method;
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    // node:https (and tls) only when a URL needs it: ~2 ms of a CLI start otherwise.
    const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const req = send(
        url,
        {
          method,
          headers: Object.fromEntries(request.headers),
          lookup: loopbackLookup,
          ...(init?.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 502;
          const empty = method === 'HEAD' || [101, 204, 205, 304].includes(status);
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage ?? '',
              headers: toHeaders(res.headers),
            }),
          );
        },
      );
      // Same shape as fetch's own failure, so retries and error messages treat both alike.
      req.on('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
      req.end(body);
    });
  };
}
