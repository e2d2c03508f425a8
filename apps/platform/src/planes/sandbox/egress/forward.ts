// Sends one HTTP request on to its destination (plain HTTP from an absolute-URI proxy request, or
// HTTPS from an intercepted CONNECT) and streams the answer back, applying a routing rule's header
// and body injection on the way (body-injection.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { injectBody, injectHeaders, type Headers } from './body-injection.js';
import type { RoutingRule } from '../records/network-settings.js';
import { refuseResponse } from './refusal.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and proxy credentials never travel upstream. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Bodies to inject into are buffered; past this the request is refused rather than truncated. */
export const MAX_INJECTED_BODY_BYTES = 10 * 1024 * 1024;

export interface ForwardTarget {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  path: string;
  rule: RoutingRule | undefined;
}

export interface Upstream {
  http: HttpAgent;
  https: HttpsAgent;
  /** Used only on errors: tells why a connection failed (policy vs network). */
  describeError(err: unknown): { status: number; message: string };
}

function cleanHeaders(req: IncomingMessage): Headers {
  const out: Headers = {};
  const listed = new Set(
    String(req.headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  for (const [name, value] of Object.entries(req.headers)) {
    if (HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function readAll(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  target: ForwardTarget,
  upstream: Upstream,
): Promise<void> {
  let headers = cleanHeaders(req);
  // The policy decided on the target's host: a different Host header must not reach another
  // virtual host behind the same address.
  const defaultPort = target.protocol === 'https:' ? 443 : 80;
  headers.host = target.port === defaultPort ? target.host : `${target.host}:${target.port}`;
  let body: Buffer | undefined;
  if (target.rule) {
    headers = injectHeaders(headers, target.rule);
    if (target.rule.body !== undefined) {
      const original = await readAll(req, MAX_INJECTED_BODY_BYTES);
      if (original === undefined) {
        refuseResponse(
          res,
          413,
          `request body over ${MAX_INJECTED_BODY_BYTES} bytes cannot have fields injected`,
        );
        return;
      }
      body = injectBody(req.method ?? 'GET', original, target.rule) ?? original;
      headers['content-length'] = String(body.length);
      if (!headers['content-type'] && body.length > 0) headers['content-type'] = 'application/json';
    }
  }
  const options = {
    method: req.method,
    host: target.host,
    port: target.port,
    path: target.path,
    headers,
  };
  const out =
    target.protocol === 'https:'
      ? httpsRequest({ ...options, agent: upstream.https, servername: target.host })
      : httpRequest({ ...options, agent: upstream.http });
  out.on('response', (upRes) => {
    const resHeaders: Headers = {};
    for (const [name, value] of Object.entries(upRes.headers)) {
      if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding')
        resHeaders[name] = value;
    }
    res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, resHeaders);
    upRes.pipe(res);
    upRes.on('error', () => res.destroy());
  });
  out.on('error', (err) => {
    const { status, message } = upstream.describeError(err);
    refuseResponse(res, status, message);
  });
  res.on('close', () => {
    if (!res.writableFinished) out.destroy();
  });
  if (body !== undefined) out.end(body);
  else req.pipe(out);
}
