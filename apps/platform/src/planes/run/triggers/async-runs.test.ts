// Async requests over real HTTP: a stand-in replica server (the contract is plain HTTP on PORT),
// the real callback sender on loopback (allowed as an operator would), and a server calling
// AsyncRuns.accept as the gateway does after authentication. Checks the bounds — body size (413),
// per-workspace concurrency and queue (429, another workspace unaffected) — the trigger's
// timeout (a 504 payload, still delivered), and that the platform's credentials never reach the
// agent while the caller's other headers do. The spool is real (a temporary directory): a request
// stopped mid-run is found and delivered by the next AsyncRuns, under its id.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicDestinationGuards } from '../../../framework/destinations/public-destinations.js';
import type { RunAddress } from '../run-address.js';
import { sendRunError } from '../run-error.js';
import type { Replica } from '../replica-sets.js';
import type { RunRecord, RunTrigger } from '../run-ports.js';
import { AsyncRuns, type AsyncRunsDeps } from './async-runs.js';
import { AsyncSpool } from './async-spool.js';
import { CallbackSender } from './callback-sender.js';
import { verifyCallback, type CallbackPayload } from './callback-signature.js';
import { runRecord } from '../../../test-support/run-record.js';

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

describe('async runs', () => {
  let replica: Server;
  let receiver: Server;
  let front: Server;
  let base = '';
  let receiverPort = 0;
  const seen: Array<Record<string, unknown>> = [];
  const delivered = new Map<string, CallbackPayload>();
  const counted: string[] = [];
  let replicaObj: Replica;
  let runs: AsyncRuns;

  const trigger = (over: Partial<RunTrigger> = {}): RunTrigger => ({
    id: 'later',
    type: 'http-async',
    path: '/later',
    public: false,
    callbackUrl: `http://127.0.0.1:${receiverPort}/cb`,
    retry: 0,
    timeoutSeconds: 30,
    ...over,
  });
  const record = (workspace: string): RunRecord =>
    runRecord({ id: `id-${workspace}`, workspace, image: 'img', maxScale: 10 });
  let nextTrigger = trigger;
  const spoolDir = mkdtempSync(join(tmpdir(), 'tarmac-async-spool-'));
  let deps: AsyncRunsDeps;

  beforeAll(async () => {
    replica = createServer((req, res) => {
      seen.push({ url: req.url, ...req.headers });
      const wait = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('wait') ?? 0);
      req.resume();
      setTimeout(() => res.end(`done ${req.url}`), wait);
    });
    const replicaPort = await listen(replica);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const ok = verifyCallback(
          'secret',
          body,
          req.headers['x-blaxel-signature'] as string,
          req.headers['x-blaxel-timestamp'] as string,
        );
        const p = JSON.parse(body) as CallbackPayload;
        if (ok) delivered.set(p.request_id, p);
        res.writeHead(ok ? 200 : 401).end();
      });
    });
    receiverPort = await listen(receiver);
    replicaObj = {
      engineId: 'rp-x',
      recordId: 'id',
      kind: 'agent',
      workspace: 'ws',
      name: 'a',
      revision: 'r1',
      slot: 0,
      attempt: 1,
      ip: '127.0.0.1',
      port: replicaPort,
      phase: 'ready',
      credentialId: 'x',
      readyAtMs: 0,
      inflight: 0,
      lastUsedMs: 0,
    };
    deps = {
      replicaFor: async () => replicaObj,
      spool: new AsyncSpool(spoolDir),
      sender: new CallbackSender({ ...publicDestinationGuards(['127.0.0.1/32']), selfPort: () => undefined }),
      secretOf: async () => 'secret',
      count: (_r, id) => counted.push(id),
      limits: { concurrency: 1, queue: 1, maxBodyBytes: 64 },
      logger: pino({ level: 'silent' }),
    };
    runs = new AsyncRuns(deps);
    front = createServer((req: IncomingMessage, res: ServerResponse) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const ws = u.pathname.split('/')[1] ?? 'ws';
      const addr: RunAddress = {
        kind: 'agent',
        workspace: ws,
        name: 'a',
        path: `/${u.search}`,
        trigger: nextTrigger(),
      };
      const r = { ...record(ws), enabled: ws !== 'disabled' };
      runs.accept(req, res, addr, r).catch((err) => sendRunError(res, err));
    });
    base = `http://127.0.0.1:${await listen(front)}`;
  });
  afterAll(async () => {
    await runs.stop();
    for (const s of [front, replica, receiver]) await new Promise<void>((r) => s.close(() => r()));
    rmSync(spoolDir, { recursive: true, force: true });
  });

  const post = (path: string, body = 'x', headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', body, headers });
  const until = async (id: string) => {
    for (let i = 0; i < 200 && !delivered.has(id); i++) await new Promise((r) => setTimeout(r, 25));
    return delivered.get(id);
  };

  it('answers 202 with an id, counts it, runs it without the platform credentials, delivers', async () => {
    const res = await post('/ws?q=1', 'hello', {
      authorization: 'Bearer platform-key',
      'x-service-thread-id': 't',
    });
    expect(res.status).toBe(202);
    const { success, id } = (await res.json()) as { success: boolean; id: string };
    expect(success).toBe(true);
    expect(counted).toContain(id);
    const p = await until(id);
    expect(p).toMatchObject({ status_code: 200, response_body: 'done /?q=1', response_length: 10 });
    const at = seen.find((s) => s['x-service-request-id'] === id)!;
    expect(at.authorization).toBeUndefined();
    expect(at['x-service-thread-id']).toBe('t');
  });

  it('refuses a body over the limit (413) and a full workspace queue (429), other workspaces go on', async () => {
    expect((await post('/ws', 'y'.repeat(65))).status).toBe(413);
    const slow1 = await post('/ws?wait=800');
    const slow2 = await post('/ws?wait=10');
    expect([slow1.status, slow2.status]).toEqual([202, 202]); // one running, one waiting
    const full = await post('/ws');
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('5');
    expect((await post('/other')).status).toBe(202);
    const { id } = (await slow2.json()) as { id: string };
    expect(await until(id)).toMatchObject({ status_code: 200 });
  });

  it('a disabled agent refuses at once (503), nothing counted', async () => {
    const before = counted.length;
    const res = await post('/disabled');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/spec.enabled is false/);
    expect(counted.length).toBe(before);
  });

  it('a request past the trigger timeout is delivered as a 504', async () => {
    nextTrigger = () => trigger({ timeoutSeconds: 1 });
    try {
      const res = await post('/late?wait=3000');
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as { id: string };
      const p = await until(id);
      expect(p?.status_code).toBe(504);
      expect(p?.response_body).toMatch(/timeout/);
    } finally {
      nextTrigger = trigger;
    }
  });

  it('a delivered request leaves the spool; one stopped mid-run is delivered by the next start, under its id', async () => {
    const spooled = () => readdirSync(spoolDir).filter((f) => f.endsWith('.req'));
    // (Earlier tests' requests may still be in the spool, running: only this test's are looked at.)
    const first = ((await (await post('/spooled')).json()) as { id: string }).id;
    expect(await until(first)).toBeDefined();
    expect(spooled()).not.toContain(`${first}.req`);
    const res = await post('/ws?wait=1500', 'keep me', { authorization: 'Bearer platform-key' });
    const { id } = (await res.json()) as { id: string };
    // On disk before the 202, without the caller's credentials.
    expect(spooled()).toContain(`${id}.req`);
    const file = readFileSync(join(spoolDir, `${id}.req`), 'utf8');
    expect(file).toMatch(/keep me$/);
    expect(file).not.toContain('platform-key');
    await runs.stop(); // the platform stops while the agent works on it
    expect(delivered.has(id)).toBe(false);
    expect(spooled()).toContain(`${id}.req`);
    // The next start: the same record (by id) is there, the request runs again and its trigger's
    // callback is delivered.
    runs = new AsyncRuns(deps);
    expect(await runs.recover([{ ...record('ws'), triggers: [trigger()] }])).toBeGreaterThanOrEqual(1);
    const p = await until(id);
    expect(p).toMatchObject({ status_code: 200, response_body: 'done /?wait=1500', request_id: id });
    expect(counted.filter((c) => c === id)).toHaveLength(1); // metered once
    expect(spooled()).not.toContain(`${id}.req`);
  }, 20_000);

  it('a spooled request whose record is gone (deleted, or made again under its name) is dropped', async () => {
    const res = await post('/ws?wait=1500');
    const { id } = (await res.json()) as { id: string };
    await runs.stop();
    runs = new AsyncRuns(deps);
    expect(readdirSync(spoolDir)).toContain(`${id}.req`);
    expect(await runs.recover([{ ...record('ws'), id: 'another-id' }])).toBe(0);
    expect(readdirSync(spoolDir)).not.toContain(`${id}.req`);
    expect(delivered.has(id)).toBe(false);
  });

  it('a request the spool cannot store is refused (503, Retry-After), never answered 202 nor counted', async () => {
    const kept = runs;
    const spool = new AsyncSpool(spoolDir);
    runs = new AsyncRuns({
      ...deps,
      spool: {
        save: async () => {
          throw new Error('ENOSPC: no space left on device');
        },
        remove: (id) => spool.remove(id),
        load: () => spool.load(),
      },
    });
    try {
      const before = counted.length;
      const res = await post('/full');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { error: string }).error).toMatch(/could not be stored/);
      expect(counted.length).toBe(before);
    } finally {
      await runs.stop();
      runs = kept;
    }
  });
});
