// Helpers of platform-faults.test.ts: the platform's process and descriptors, idle connections,
// keys and terminals, and polling.
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type LookupFunction, type Socket } from 'node:net';
import { expect } from 'vitest';
import WebSocket from 'ws';
import { PLATFORM_MAIN, type RunningPlatform } from '../support/platform.js';
import { json } from '../sandboxes/support.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** *.localhost → 127.0.0.1 (RFC 6761): preview hosts. */
export const loopback: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** The platform's pid: the node process running PLATFORM_MAIN with this home. */
export function platformPid(home: string): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv.includes(PLATFORM_MAIN) && argv.includes(home)) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no platform process for ${home}`);
}

export const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** Opens `n` idle TCP connections from `from`; resolves with the ones still open after a moment. */
export async function idleConnections(port: number, from: string, n: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, () => {
      const s = connect({ port, host: '127.0.0.1', localAddress: from });
      s.on('error', () => undefined);
      s.resume();
      sockets.push(s);
      return new Promise<void>((r) => s.once('connect', () => r()).once('close', () => r()));
    });
    await Promise.all(batch);
  }
  await sleep(300);
  return sockets;
}

export function sandboxUrl(
  p: RunningPlatform,
  name: string,
  path: string,
  ws = p.credentials.workspace,
): string {
  return `${p.url}/${ws}/sandboxes/${name}${path}`;
}

export async function createKey(p: RunningPlatform, body: Record<string, unknown>) {
  const res = await p.api('/v0/api_keys', { method: 'POST', body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  return json<{ id: string; apiKey: string; expiresAt: string | null }>(res);
}

export function openTerminal(p: RunningPlatform, name: string, key: string): Promise<WebSocket> {
  const url = sandboxUrl(p, name, `/terminal/ws?sessionId=faults`).replace(/^http/, 'ws');
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`websocket refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Polls `probe` every 50 ms until it returns true; resolves with the time it first did. */
export async function firstTrue(probe: () => Promise<boolean>, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe()) return Date.now();
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
    await sleep(50);
  }
}

/** The status of a GET with `key`; 0 when the connection was cut (a revoked session closed). */
export async function status(url: string, key: string): Promise<number> {
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
