// Shared set-up of the sandbox API end-to-end tests: one built platform with real sandboxes
// (../sandboxes/support.ts), and clients that reach a sandbox's API through the platform's router
// host-style (`sbx-<name>-<ws>.<region>.localhost:<port>`, resolved to 127.0.0.1 the way the SDK
// does) or path-style (`{run_url}/{ws}/sandboxes/{name}`).
import type { LookupFunction } from 'node:net';
import { localhostFetch } from '@tarmac/sdk/node';
import WebSocket from 'ws';
import type { RunningPlatform } from '../support/platform.js';

export type Style = 'host' | 'path';
export const STYLES: Style[] = ['host', 'path'];

/** *.localhost → 127.0.0.1 (RFC 6761), for node:http and ws. */
export const loopbackLookup: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

export const hostFetch = localhostFetch();

/** Base URL of a sandbox's API in either style. */
export function sandboxBase(p: RunningPlatform, name: string, style: Style): string {
  const port = new URL(p.url).port;
  return style === 'host'
    ? `http://sbx-${name}-${p.credentials.workspace}.local.localhost:${port}`
    : `${p.url}/${p.credentials.workspace}/sandboxes/${name}`;
}

/** A request to the sandbox API through the router, authenticated with the admin API key. */
export function call(
  p: RunningPlatform,
  name: string,
  style: Style,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${p.credentials.apiKey}`);
  if (typeof init.body === 'string' && !headers.has('content-type'))
    headers.set('content-type', 'application/json');
  const url = sandboxBase(p, name, style) + path;
  return (style === 'host' ? hostFetch : fetch)(url, { ...init, headers });
}

/** `fetch` with *.localhost resolved to loopback (host-style URLs, preview hosts). */
export function anyFetch(url: string, init: RequestInit = {}): Promise<Response> {
  return new URL(url).hostname.endsWith('.localhost') ? hostFetch(url, init) : fetch(url, init);
}

/** Opens a WebSocket (loopback for *.localhost) and resolves once it is open. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, lookup: loopbackLookup });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => reject(new Error(`websocket refused: ${res.statusCode} ${body}`)));
    });
    ws.once('error', reject);
  });
}

/**
 * Types a command into the terminal WebSocket (sandboxd `{type:'input'}` / `{type:'output'}`) and
 * resolves with the output once `marker` shows up.
 */
export function typeAndRead(ws: WebSocket, command: string, marker: string, ms = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "${marker}" in terminal output: ${out}`)), ms);
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as { type: string; data?: string };
      if (m.type === 'output') out += m.data ?? '';
      if (out.includes(marker)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    ws.send(JSON.stringify({ type: 'input', data: `${command}\r` }));
  });
}

export async function body<T = Record<string, unknown>>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 300)}`);
  }
}

/**
 * A bridge and subnet of this area's own (the sandboxes area uses tarmace2e0): other engineers'
 * e2e runs on the same machine would otherwise collide on the bridge and the egress proxy port.
 */
export function ownNetwork(n: number): Record<string, string> {
  return { TARMAC_BRIDGE: `tarmacsa${n}`, TARMAC_SUBNET: `10.${210 + n}.0.0/16` };
}
