// Issue 19 item 10: open requests and upgraded connections of a credential are closed when it is
// revoked (at once) or expires (next sweep); refused ones are left to answer their own 401.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Revocation } from '../../../framework/revocations.js';
import { OpenSessions } from './open-sessions.js';

const valid = new Set<string>();
const listeners = new Set<(r: Revocation) => void>();
const access = {
  async allowed(token: string, workspace: string) {
    return valid.has(token) && workspace === 'ws';
  },
  async authenticated(token: string) {
    return valid.has(token)
      ? { id: 'u', kind: 'user' as const, accountId: 'a', via: 'api_key' as const }
      : undefined;
  },
  onRevoke(l: (r: Revocation) => void) {
    listeners.add(l);
    return () => void listeners.delete(l);
  },
};
const revoke = (token: string) => {
  valid.delete(token);
  for (const l of listeners) l({ principalId: 'u' });
};

let server: Server | undefined;
let sessions: OpenSessions | undefined;
afterEach(async () => {
  sessions?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

async function start(sweepMs = 60_000): Promise<number> {
  sessions = new OpenSessions(
    access,
    (req: IncomingMessage) => (req.url?.startsWith('/ws') ? ['ws'] : undefined),
    sweepMs,
  );
  server = createServer((req, res) => {
    sessions!.request(req, res);
    const token = /Bearer (\S+)/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!valid.has(token)) return void res.writeHead(401).end('no');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('streaming'); // a log stream: never ends by itself
  });
  server.on('upgrade', (req, socket) => {
    sessions!.upgrade(req, socket);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: x\r\n\r\n');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

function stream(
  port: number,
  token: string,
  path = '/ws/logs',
): Promise<{ status: number; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', path, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const ended = new Promise<void>((r) => {
          res.on('close', () => r());
          res.on('error', () => r());
        });
        res.resume();
        resolve({ status: res.statusCode ?? 0, ended });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('OpenSessions', () => {
  it('closes a streaming response of a revoked credential at once, and only that one', async () => {
    valid.add('k1').add('k2');
    const port = await start();
    const s1 = await stream(port, 'k1');
    const s2 = await stream(port, 'k2');
    expect([s1.status, s2.status]).toEqual([200, 200]);
    const t0 = Date.now();
    revoke('k1');
    await s1.ended;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(sessions!.closed).toBe(1);
    expect(sessions!.size()).toBe(1); // k2 still open
  });

  it('closes an upgraded connection when its credential stops being valid at the next sweep', async () => {
    valid.add('k3');
    const port = await start(100);
    const socket = connect(port, '127.0.0.1');
    socket.write(
      'GET /ws/terminal HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: x\r\nauthorization: Bearer k3\r\n\r\n',
    );
    socket.resume();
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    await new Promise((r) => setTimeout(r, 200));
    expect(socket.destroyed).toBe(false);
    valid.delete('k3'); // expired: no notice, the sweep finds it
    const t0 = Date.now();
    await closed;
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a request with a check of its own (preview hosts) is closed when that check turns false', async () => {
    let open = true;
    sessions = new OpenSessions(
      access,
      () => undefined,
      100,
      (req) => (req.url?.startsWith('/preview') ? async () => open : undefined),
    );
    server = createServer((req, res) => {
      sessions!.request(req, res);
      res.writeHead(200).write('streaming');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const a = server.address();
    const s = await stream(typeof a === 'object' && a ? a.port : 0, 'no-platform-token', '/preview/x');
    expect(sessions.size()).toBe(1);
    open = false; // the preview token was deleted
    const t0 = Date.now();
    await s.ended;
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('leaves a refused request to answer its own 401', async () => {
    const port = await start(50);
    const s = await stream(port, 'bad');
    expect(s.status).toBe(401);
    expect(sessions!.closed).toBe(0);
  });
});
