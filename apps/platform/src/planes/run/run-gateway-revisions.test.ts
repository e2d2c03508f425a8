// The run gateway with two revisions taking traffic, over real HTTP (the sandbox gateway's real
// proxy, one HTTP server per revision standing in for its replica; a public record, so no auth):
// the sticky cookie is set beside the replica's own Set-Cookie and honoured; an MCP session goes
// back to the revision that made it (its `Mcp-Session-Id`), whatever the draw says; both revisions
// answer a share of the rest.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessCache } from '../../framework/access-cache.js';
import { StartWaiters } from '../../framework/held-requests.js';
import { SandboxProxy } from '../sandbox/gateway/proxy.js';
import { ReplicaSets, type Replica } from './replica-sets.js';
import { RunGateway } from './run-gateway.js';
import type { RunRecord } from './run-ports.js';
import { SessionRevisions } from './traffic-split.js';

const record: RunRecord = {
  id: 'rec',
  kind: 'function',
  workspace: 'ws',
  name: 'tools',
  status: 'DEPLOYED',
  enabled: true,
  public: true,
  image: 'functions/tools:b',
  memoryMB: 256,
  port: 8080,
  hosts: [],
  minScale: 0,
  maxScale: 10,
  revision: 'b',
  lastMessage: undefined,
  traffic: [
    { revision: 'a', percent: 50, image: 'functions/tools:a', memoryMB: 256 },
    { revision: 'b', percent: 50, image: 'functions/tools:b', memoryMB: 256 },
  ],
  stickySessionTtl: 60,
};

describe('run gateway: revisions', () => {
  const servers: Server[] = [];
  const sets = new ReplicaSets();
  const proxy = new SandboxProxy({ upstreamName: 'replica' });
  let platform: Server;
  let gateway: RunGateway;
  let base = '';

  /** A replica of `revision`: names itself; makes an MCP session on `initialize`; sets its own cookie. */
  async function replica(revision: string): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const session =
          req.headers['mcp-session-id'] ??
          (body.includes('initialize') ? `s-${revision}-${Math.random()}` : '');
        res.setHeader('set-cookie', 'app=1; Path=/');
        if (session) res.setHeader('mcp-session-id', session);
        res.end(revision);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    const r: Replica = {
      engineId: `rp-${revision}`,
      recordId: 'rec',
      kind: 'function',
      workspace: 'ws',
      name: 'tools',
      revision,
      slot: 0,
      attempt: 1,
      ip: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      phase: 'ready',
      credentialId: `rec.rp0.${revision}`,
      readyAtMs: 0,
      inflight: 0,
      lastUsedMs: 0,
    };
    sets.set('rec', revision).replicas.push(r);
  }

  beforeAll(async () => {
    await replica('a');
    await replica('b');
    gateway = new RunGateway({
      controller: {
        ready: Promise.resolve(),
        record: (kind, ws, name) =>
          kind === 'function' && ws === 'ws' && name === 'tools' ? record : undefined,
        readyReplica: (r, revision, key) =>
          sets.ready(r.id, revision ?? r.revision, key ? { key, now: Date.now() } : undefined),
        pinSession: (r, key) => sets.pin(r, key, Date.now()),
      },
      access: {} as AccessCache, // public record: never asked
      forwarder: proxy,
      held: new StartWaiters(10),
      holdMs: 1000,
      logger: pino({ level: 'silent' }),
    });
    platform = createServer((req, res) => {
      const addr = gateway.match(req);
      if (addr) void gateway.handle(req, res, addr);
      else res.writeHead(418).end();
    });
    await new Promise<void>((r) => platform.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(platform.address() as AddressInfo).port}/ws/functions/tools`;
  });

  afterAll(async () => {
    proxy.close();
    for (const s of [platform, ...servers]) await new Promise<void>((r) => s.close(() => r()));
  });

  it('sets the sticky cookie beside the replica’s own and honours it; the split reaches both', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) seen.add(await (await fetch(`${base}/x`)).text());
    expect(seen).toEqual(new Set(['a', 'b'])); // 50/50: both within 40 draws (1 in 5e11 to fail)
    const first = await fetch(`${base}/x`);
    const mine = await first.text();
    const cookies = first.headers.getSetCookie();
    expect(cookies).toContain('app=1; Path=/');
    const sticky = cookies.find((c) => c.startsWith('tarmac-revision='))!;
    expect(sticky).toMatch(
      new RegExp(`^tarmac-revision=${mine}\\.\\d+; Max-Age=60; Path=/ws/functions/tools;`),
    );
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${base}/x`, { headers: { cookie: sticky.split(';')[0]! } });
      expect(await res.text()).toBe(mine);
      expect(res.headers.getSetCookie()).toEqual(['app=1; Path=/']); // not set again
    }
  });

  it('an MCP session goes back to the revision, then the replica, that made it', async () => {
    const pinned: Record<string, number> = { a: 0, b: 0 };
    for (let n = 0; n < 6; n++) {
      const init = await fetch(`${base}/mcp`, { method: 'POST', body: '{"method":"initialize"}' });
      const made = await init.text();
      const session = init.headers.get('mcp-session-id')!;
      expect(session).toMatch(new RegExp(`^s-${made}-`));
      // Pinned from the answer, before the session's next request (replica-affinity.ts).
      expect(sets.get('rec', made)!.pins.countOf(`rp-${made}`, Date.now())).toBe(++pinned[made]!);
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'mcp-session-id': session } });
        expect(await res.text()).toBe(made);
      }
    }
    expect(gateway.sessions.size).toBe(6);
  });

  it('remembers a bounded number of sessions, the oldest forgotten first', () => {
    const s = new SessionRevisions(2);
    s.remember('r', 's1', 'a');
    s.remember('r', 's1', 'b'); // the first answer made it: kept
    s.remember('r', 's2', 'b');
    s.remember('r', 's3', 'a');
    expect([s.revisionOf('r', 's1'), s.revisionOf('r', 's2'), s.revisionOf('r', 's3')]).toEqual([
      undefined,
      'b',
      'a',
    ]);
    expect(s.revisionOf('other', 's2')).toBeUndefined();
  });
});
