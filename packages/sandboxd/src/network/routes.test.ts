import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';
import { recordingTunnel, type TunnelDriver } from './tunnel.js';
import { decodeAddr } from '../process/ports.js';

const tunnel = recordingTunnel();
let t: TestDaemon;
let listener: Server;
beforeAll(async () => {
  t = await startDaemon({ tunnel });
  listener = createServer().listen(0, '0.0.0.0');
  await once(listener, 'listening');
});
afterAll(async () => {
  listener.close();
  await t.stop();
});

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64');
const KEY = 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=';
const valid = {
  local_ip: '10.0.0.2/32',
  peer_endpoint: 'vpn.example.com:51820',
  peer_public_key: KEY,
  private_key: KEY,
};

describe('GET /network/process/{pid}/ports (reference §1.4)', () => {
  it('lists the sockets of a process and its children', async () => {
    const port = (listener.address() as AddressInfo).port;
    const r = await call(t.base, 'GET', `/network/process/${process.pid}/ports`);
    expect(r.status).toBe(200);
    expect(r.body.pid).toBe(process.pid);
    expect(r.body.ports).toContainEqual({
      pid: process.pid,
      protocol: 'tcp',
      localAddr: expect.stringMatching(/^(0\.0\.0\.0|::)$/),
      localPort: port,
      remoteAddr: expect.any(String),
      remotePort: 0,
      state: 'LISTEN',
      processName: expect.any(String),
    });
  });

  it('400s an invalid pid, 422s an unknown one', async () => {
    expect((await call(t.base, 'GET', '/network/process/abc/ports')).status).toBe(400);
    expect((await call(t.base, 'GET', '/network/process/999999999/ports')).status).toBe(422);
  });

  it('decodes /proc/net addresses', () => {
    expect(decodeAddr('0100007F')).toBe('127.0.0.1');
    expect(decodeAddr('00000000000000000000000000000000')).toBe('::');
    expect(decodeAddr('0000000000000000FFFF00000100007F')).toBe('127.0.0.1');
  });
});

describe('port monitor', () => {
  it('POSTs {pid, port} to the callback for a newly listening port, and stops', async () => {
    const got: unknown[] = [];
    const cb = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push(JSON.parse(body));
        res.end();
      });
    }).listen(0, '127.0.0.1');
    await once(cb, 'listening');
    const url = `http://127.0.0.1:${(cb.address() as AddressInfo).port}/hook`;
    const proc = await call(t.base, 'POST', '/process', {
      command: 'sleep 0.3; exec node -e "require(\'net\').createServer().listen(0)"',
      name: 'mon',
    });
    const start = await call(t.base, 'POST', `/network/process/${proc.body.pid}/monitor`, { callback: url });
    expect(start.body).toEqual({ message: 'Port monitoring started' });
    const end = Date.now() + 5000;
    while (got.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(got[0]).toEqual({ pid: expect.any(Number), port: expect.any(Number) });
    expect((await call(t.base, 'DELETE', `/network/process/${proc.body.pid}/monitor`)).body).toEqual({
      message: 'Port monitoring stopped',
    });
    expect(
      (await call(t.base, 'POST', `/network/process/${proc.body.pid}/monitor`, { callback: 'not a url' }))
        .status,
    ).toBe(400);
    await call(t.base, 'DELETE', '/process/mon/kill');
    cb.close();
  });
});

describe('tunnel routes (spec "Sandbox API", reference §1.4)', () => {
  it('DELETE /network/tunnel 400s when no tunnel is up', async () => {
    const r = await call(t.base, 'DELETE', '/network/tunnel');
    expect(r).toMatchObject({ status: 400, body: { error: expect.any(String) } });
  });

  it('PUT /network/tunnel/config: 400 bad body, 422 invalid config, 200 with defaults applied', async () => {
    expect((await call(t.base, 'PUT', '/network/tunnel/config', {})).status).toBe(400);
    expect((await call(t.base, 'PUT', '/network/tunnel/config', { config: '!!notbase64json' })).status).toBe(
      422,
    );
    for (const bad of [
      { ...valid, local_ip: '10.0.0.2' },
      { ...valid, peer_endpoint: 'nohost' },
      { ...valid, private_key: 'short' },
      { ...valid, mtu: 10 },
      { ...valid, allowed_ips: ['0.0.0.0'] },
      { local_ip: '10.0.0.2/32' },
    ]) {
      const r = await call(t.base, 'PUT', '/network/tunnel/config', { config: b64(bad) });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ error: expect.stringMatching(/^invalid tunnel config/) });
    }
    const ok = await call(t.base, 'PUT', '/network/tunnel/config', { config: b64(valid) });
    expect(ok.body).toEqual({ message: 'Tunnel configuration updated successfully' });
    expect(tunnel.applied.at(-1)).toEqual({
      ...valid,
      mtu: 1420,
      listen_port: 51820,
      interface_name: 'wg0',
      allowed_ips: ['0.0.0.0/0'],
      persistent_keepalive: 25,
      route_all: false,
    });
    expect((await call(t.base, 'DELETE', '/network/tunnel')).body).toEqual({
      message: 'Tunnel disconnected',
    });
    expect((await call(t.base, 'DELETE', '/network/tunnel')).status).toBe(400);
  });

  it('500s when the driver fails; the default driver refuses to apply', async () => {
    const failing: TunnelDriver = {
      apply: () => Promise.reject(new Error('wg missing')),
      disconnect: () => Promise.reject(new Error('stuck')),
      isUp: () => true,
    };
    const d = await startDaemon({ tunnel: failing });
    const def = await startDaemon();
    try {
      expect((await call(d.base, 'PUT', '/network/tunnel/config', { config: b64(valid) })).body).toEqual({
        error: 'failed to apply tunnel configuration: wg missing',
      });
      expect((await call(d.base, 'DELETE', '/network/tunnel')).status).toBe(500);
      expect((await call(def.base, 'PUT', '/network/tunnel/config', { config: b64(valid) })).status).toBe(
        500,
      );
      expect((await call(def.base, 'DELETE', '/network/tunnel')).status).toBe(400);
    } finally {
      await d.stop();
      await def.stop();
    }
  });
});
