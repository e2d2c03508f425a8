// Issue 16, the run plane's foundation, end to end on the real platform, real buildah and real
// runc: a Node server built from a folder (?upload=true) deploys as an agent — DEPLOYED only once
// its replica answered on PORT — and answers {inputs} and sub-paths through the run URL with the
// thread headers forwarded (two threads, two histories) and the platform's credentials not; SSE streams through, WebSocket
// upgrades are spliced; a private agent refuses no token and a wrong token (401) and another
// workspace's key (404); a public one needs none; a request sent while the replica starts is held,
// then served; a crashing image goes FAILED with its last log line, one that never listens FAILED
// too; a function's MCP endpoint answers the official MCP client with its session intact and gets
// its connection's secret as env; a replica reaches no other replica nor the platform directly
// (the attack); logs (route and CLI); a new revision replaces the replica only once it answers,
// a crashing one leaves the previous serving; one that dies after serving is restarted; a platform
// restart re-attaches the replica (same process, no new container); disable → DEACTIVATED and 503;
// delete removes it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cliEnv, runCli } from '../cli/cli-runner.js';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import type { RunningPlatform } from '../support/platform.js';
import { closeRunPlatform } from '../support/run-workloads.js';
import {
  engineIds,
  json,
  missingBuildCapability,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import { APP_MEMBERS, type Echo } from './app-image.js';

const missing = (): string | null => missingBuildCapability();
const skip = missing();
const OTHER = 'rp-other';

interface Record_ {
  status: string;
  spec: { runtime?: { image?: string } };
  events: Array<{ status: string; message: string }>;
}

describe.skipIf(skip !== null)(`run plane: agents and functions${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let home = '';
  let ws = '';
  let image = '';
  let workspaceId = '';
  let otherKey = '';
  const ids = new Set<string>();
  let cliHome = '';
  const start = (h?: string) =>
    startSandboxPlatform({
      ...(h ? { home: h } : {}),
      env: {
        TARMAC_BRIDGE: 'tarmacrp0',
        TARMAC_SUBNET: '10.190.0.0/16',
        TARMAC_RUN_READY_TIMEOUT_SECONDS: '8',
        TARMAC_RUN_HOLD_SECONDS: '90',
      },
    });
  // Two workspaces: every management call names ours.
  const api = (path: string, init: RequestInit = {}) =>
    p.api(path, {
      ...init,
      headers: { 'x-service-workspace': ws, ...(init.headers as Record<string, string>) },
    });
  const run = (path: string, init: RequestInit = {}, key: string | null = p.credentials.apiKey) =>
    fetch(`${p.credentials.runUrl}/${ws}/${path}`, {
      ...init,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  const record = async (kind: string, name: string) => json<Record_>(await api(`/v0/${kind}/${name}`));
  const until = (kind: string, name: string, statuses: string[], ms = 120_000) =>
    waitFor(
      `${kind}/${name} in ${statuses.join('|')}`,
      async () => {
        const r = await record(kind, name);
        return statuses.includes(r.status) ? r : undefined;
      },
      ms,
    );
  const create = async (kind: string, name: string, spec: Record<string, unknown>) => {
    const res = await api(`/v0/${kind}`, {
      method: 'POST',
      body: JSON.stringify({ metadata: { name }, spec }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };

  beforeAll(async () => {
    cliHome = mkdtempSync(join(tmpdir(), 'tarmac-rpcli-'));
    p = await start();
    home = p.home;
    ws = p.credentials.workspace;
    workspaceId = (await json<{ id?: string }>(await api(`/v0/workspaces/${ws}`))).id ?? '';
    // Build the server through the builds plane: the agent record gets the image, then a replica.
    const open = await api('/v0/agents?upload=true', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'echo' },
        spec: { runtime: { memory: 256, envs: [{ name: 'GREETING', value: 'hi', secret: true }] } },
      }),
    });
    expect(open.status, await open.clone().text()).toBe(200);
    const url = open.headers.get('x-blaxel-upload-url')!;
    const put = await fetch(url, {
      method: 'PUT',
      body: zipOf(APP_MEMBERS),
      headers: { 'content-type': 'application/zip' },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const built = await until('agents', 'echo', ['DEPLOYED', 'FAILED'], 6 * 60_000);
    expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
    image = built.spec.runtime?.image ?? '';
    expect(image).toMatch(/^agents\/echo:/);
    // A second workspace with a key of its own (a service account there): not a member of ours.
    const made = await p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: OTHER }) });
    expect(made.status, await made.clone().text()).toBe(200);
    const inOther = { 'x-service-workspace': OTHER };
    const sa = await p.api('/v0/service_accounts', {
      method: 'POST',
      headers: inOther,
      body: JSON.stringify({ name: 'rp-bot', role: 'member' }),
    });
    expect(sa.status, await sa.clone().text()).toBe(200);
    const { client_id } = await json<{ client_id: string }>(sa);
    const key = await p.api(`/v0/service_accounts/${client_id}/api_keys`, {
      method: 'POST',
      headers: inOther,
      body: JSON.stringify({ name: 'rp-key' }),
    });
    expect(key.status, await key.clone().text()).toBe(200);
    otherKey = (await json<{ apiKey: string }>(key)).apiKey;
  }, 10 * 60_000);

  afterAll(async () => {
    if (!p) return;
    for (const kind of ['agents', 'functions']) {
      const list = await json<Array<{ metadata: { name: string } }>>(await api(`/v0/${kind}`)).catch(
        () => [],
      );
      for (const r of list) await api(`/v0/${kind}/${r.metadata.name}`, { method: 'DELETE' });
    }
    await closeRunPlatform(p, ids, workspaceId);
    if (cliHome) rmSync(cliHome, { recursive: true, force: true });
  }, 180_000);

  it('DEPLOYED only after the replica answered; {inputs} and sub-paths reach it with the contract env', async () => {
    const r = await record('agents', 'echo');
    const statuses = r.events.map((e) => e.status);
    expect(statuses.indexOf('DEPLOYED')).toBeGreaterThan(statuses.lastIndexOf('BUILT'));
    expect(r.events.at(-1)?.message).toMatch(/answers on port 8080/);
    const res = await run('agents/echo', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-thread-id': 't-1',
        'x-blaxel-thread-id': 'b-1',
      },
      body: JSON.stringify({ inputs: 'hello agent' }),
    });
    expect(res.status).toBe(200);
    const echo = await json<Echo>(res);
    expect(echo).toMatchObject({ method: 'POST', url: '/', thread: 't-1', blaxelThread: 'b-1' });
    expect(JSON.parse(echo.body)).toEqual({ inputs: 'hello agent' });
    // The platform's credentials stay with the platform.
    expect(echo.authorization).toBeNull();
    expect(echo.env).toMatchObject({
      PORT: '8080',
      BL_SERVER_PORT: '8080',
      HOST: '0.0.0.0',
      BL_SERVER_HOST: '0.0.0.0',
      BL_NAME: 'echo',
      BL_TYPE: 'agent',
      GREETING: 'hi', // a secret env, opened only into the container
    });
    const sub = await json<Echo>(await run('agents/echo/v1/things?x=1', { method: 'DELETE' }));
    expect(sub).toMatchObject({ method: 'DELETE', url: '/v1/things?x=1' });
  }, 60_000);

  it('two concurrent threads each see their own history (X-Service-Thread-Id reaches the same replica)', async () => {
    const say = async (thread: string, text: string) =>
      (
        await json<{ history: string[] }>(
          await run('agents/echo/chat', {
            method: 'POST',
            headers: { 'x-service-thread-id': thread },
            body: text,
          }),
        )
      ).history;
    await Promise.all([say('thread-a', 'a1'), say('thread-b', 'b1')]);
    const [a, b] = await Promise.all([say('thread-a', 'a2'), say('thread-b', 'b2')]);
    expect(a).toEqual(['a1', 'a2']);
    expect(b).toEqual(['b1', 'b2']);
  }, 30_000);

  it('streams SSE through the gateway as the replica writes it', async () => {
    const res = await run('agents/echo/stream', { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(Date.now());
      text += Buffer.from(value).toString();
    }
    expect(text.match(/^data: /gm)).toHaveLength(3);
    // Not buffered to the end: the first event arrived well before the last (300 ms apart).
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(400);
  }, 30_000);

  it('WebSocket upgrades are spliced through to the replica, with the thread header', async () => {
    const url = `${p.credentials.runUrl.replace(/^http/, 'ws')}/${ws}/agents/echo/socket?x=1`;
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'x-service-thread-id': 't-ws' },
    });
    const first = await new Promise<string>((resolve, reject) => {
      socket.once('message', (data: Buffer) => resolve(data.toString()));
      socket.once('error', reject);
    });
    socket.terminate();
    expect(first).toBe('ws /socket?x=1 t-ws');
    const refused = new WebSocket(url);
    const status = await new Promise<number>((resolve) =>
      refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  }, 30_000);

  it('private by default: no token or a wrong one 401, another workspace 404; public needs none', async () => {
    const none = await run('agents/echo', { method: 'POST', body: '{}' }, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await run('agents/echo', { method: 'POST', body: '{}' }, 'not-a-key')).status).toBe(401);
    const other = await run('agents/echo', { method: 'POST', body: '{}' }, otherKey);
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain('DEPLOYED');
    expect((await run('agents/nope', { method: 'POST', body: '{}' })).status).toBe(404);
    // The other key is valid (404 there, not 401): the 404 above is about access, not the key.
    const own = await fetch(`${p.credentials.runUrl}/${OTHER}/agents/echo`, {
      headers: { authorization: `Bearer ${otherKey}` },
    });
    expect(own.status).toBe(404);
    await create('agents', 'open', { public: true, runtime: { image, memory: 256 } });
    const held = await run('agents/open', { method: 'POST', body: 'anyone' }, null); // held while it starts
    expect(held.status).toBe(200);
    expect((await json<Echo>(held)).body).toBe('anyone');
  }, 120_000);

  it('a crashing image goes FAILED with its last log line; one that never listens FAILED too', async () => {
    await create('agents', 'crasher', {
      runtime: { image, memory: 256, envs: [{ name: 'MODE', value: 'crash' }] },
    });
    await create('agents', 'silent', {
      runtime: { image, memory: 256, envs: [{ name: 'MODE', value: 'silent' }] },
    });
    const crashed = await until('agents', 'crasher', ['FAILED', 'DEPLOYED'], 90_000);
    expect(crashed.status).toBe('FAILED');
    expect(crashed.events.at(-1)?.message).toMatch(/exited \(code 3\) before listening on port 8080/);
    expect(crashed.events.at(-1)?.message).toContain('boom: MODE=crash exits before listening');
    const refused = await run('agents/crasher', { method: 'POST', body: '{}' });
    expect(refused.status).toBe(503);
    expect((await json<{ error: string }>(refused)).error).toMatch(/agent crasher FAILED: .*boom/s);
    const silent = await until('agents', 'silent', ['FAILED', 'DEPLOYED'], 90_000);
    expect(silent.status).toBe('FAILED');
    expect(silent.events.at(-1)?.message).toMatch(/did not listen on port 8080 within 8 s/);
    expect(silent.events.at(-1)?.message).toContain('silent: never listening on purpose');
  }, 200_000);

  it("a function's MCP endpoint answers the official MCP client, sessions intact; its connection's secret is env, never shown", async () => {
    const conn = await api('/v0/integrations/connections', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'rp-conn' },
        spec: { integration: 'github', config: { REGION_HINT: 'eu' }, secret: { API_TOKEN: 'gh-s3cret' } },
      }),
    });
    expect(conn.status, await conn.clone().text()).toBe(200);
    await create('functions', 'tools', {
      integrationConnections: ['rp-conn'],
      runtime: { image, memory: 256 },
    });
    const transport = new StreamableHTTPClientTransport(
      new URL(`${p.credentials.runUrl}/${ws}/functions/tools/mcp`),
      {
        requestInit: { headers: { authorization: `Bearer ${p.credentials.apiKey}` } },
      },
    );
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport); // held while the replica starts, then initialize
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['whoami']);
      const out = (await client.callTool({ name: 'whoami', arguments: {} })) as {
        content: Array<{ type: string; text: string }>;
      };
      const seen = JSON.parse(out.content[0]!.text) as { session: string; token: string };
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen).toMatchObject({ session: transport.sessionId, token: 'gh-s3cret' });
    } finally {
      await client.close();
    }
    // Other paths of the function reach it too, with the connection's config and secret as env.
    const echo = await json<Echo>(await run('functions/tools/env'));
    expect(echo.env).toMatchObject({ API_TOKEN: 'gh-s3cret', REGION_HINT: 'eu', BL_TYPE: 'function' });
    const shown = await (await api('/v0/functions/tools')).text();
    expect(shown).not.toContain('gh-s3cret');
    expect((await record('functions', 'tools')).status).toBe('DEPLOYED');
  }, 120_000);

  it('attack: a replica reaches neither another replica nor the platform directly, only through the run URL', async () => {
    const replicaOf = async (kind: string, name: string) =>
      (await json<{ replica: string }>(await api(`/v0/${kind}/${name}/replicas/logs`))).replica;
    const ipOf = (id: string) =>
      (JSON.parse(readFileSync(join(home, 'sandboxes', id, 'sandbox.json'), 'utf8')) as { ip: string }).ip;
    const probe = async (target: string) => (await run(`agents/echo/probe?target=${target}`)).text();
    // The probe works: the replica reaches its own port.
    expect(await probe('127.0.0.1:8080')).toBe('reachable');
    // The function's replica (same workspace even) is not reachable across the bridge: isolated
    // bridge ports; its only door is the run URL, which authenticates.
    const other = ipOf(await replicaOf('functions', 'tools'));
    expect(other).toMatch(/^10\.190\./);
    expect(await probe(`${other}:8080`)).toBe('unreachable');
    // Nor the platform's own listener on the bridge gateway (only the egress proxy ports are open).
    expect(await probe(`10.190.0.1:${p.port}`)).toBe('unreachable');
  }, 60_000);

  it('logs: the replica output through the logs route and `tarmac logs agent`', async () => {
    const page = await json<{ replica: string; text: string; next: number }>(
      await api('/v0/agents/echo/replicas/logs'),
    );
    expect(page.replica).toMatch(/^rp-/);
    expect(page.text).toContain('listening on 0.0.0.0:8080');
    expect(page.text).toContain('request POST /');
    const crashed = await json<{ archived: string }>(await api('/v0/agents/crasher/replicas/logs'));
    expect(crashed.archived).toContain('boom: MODE=crash');
    const env = cliEnv({
      TARMAC_API_URL: p.url,
      TARMAC_API_KEY: p.credentials.apiKey,
      TARMAC_WORKSPACE: ws,
      TARMAC_HOME: cliHome,
    });
    const once = await runCli(['logs', 'agent', 'echo'], { env });
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toContain('listening on 0.0.0.0:8080');
    expect((await runCli(['logs', 'agent', 'nope'], { env })).code).not.toBe(0);
    // -f keeps following: a request made after it started shows up (then the test stops it).
    const following = runCli(['logs', 'agent', 'echo', '-f'], { env, timeoutMs: 6000 }).catch(
      (e: Error) => e,
    );
    await new Promise((r) => setTimeout(r, 2000));
    await run('agents/echo/after-follow', { method: 'POST', body: '{}' });
    const out = await following;
    expect(out).toBeInstanceOf(Error); // still following when stopped
    expect((out as Error).message).toContain('request POST /after-follow');
  }, 60_000);

  it('a new revision replaces the replica once it answers; a crashing revision leaves the previous serving', async () => {
    const put = async (envs: Array<{ name: string; value: string }>) => {
      const cur = await json<{ metadata: object; spec: { runtime: object } }>(await api('/v0/agents/echo'));
      const res = await api('/v0/agents/echo', {
        method: 'PUT',
        body: JSON.stringify({
          metadata: cur.metadata,
          spec: { ...cur.spec, runtime: { ...cur.spec.runtime, envs } },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const ask = async () => json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' }));
    const before = await ask();
    const replica = (await json<{ replica: string }>(await api('/v0/agents/echo/replicas/logs'))).replica;
    const ofEcho = () =>
      engineIds(home).filter((id) => id.startsWith(replica.split('-').slice(0, 2).join('-')));
    await put([{ name: 'MODE', value: 'crash' }]);
    const failed = await until('agents', 'echo', ['FAILED'], 90_000);
    expect(failed.events.at(-1)?.message).toContain('boom: MODE=crash');
    expect((await ask()).boot).toBe(before.boot); // the previous revision still answers
    await put([{ name: 'GREETING', value: 'v3' }]);
    await until('agents', 'echo', ['DEPLOYED'], 90_000);
    const after = await ask();
    expect(after.boot).not.toBe(before.boot);
    expect(after.env.GREETING).toBe('v3');
    // The previous revision's container (and any of the crashing one) goes.
    await waitFor('one container of echo', async () => (ofEcho().length === 1 ? true : undefined), 30_000);
    expect(ofEcho()).not.toContain(replica);
  }, 240_000);

  it('a replica that dies after serving is restarted (backoff); a request meanwhile is held, then served', async () => {
    const before = await json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' }));
    expect((await run('agents/echo/exit', { method: 'POST' })).status).toBe(200);
    const restarting = await until('agents', 'echo', ['DEPLOYING'], 30_000);
    expect(restarting.events.at(-1)?.message).toMatch(
      /^Replica exited \(code 7\); restarting in 1 s; last log lines:\n[\s\S]*exiting on \/exit/,
    );
    const after = await json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' })); // held, then served
    expect(after.boot).not.toBe(before.boot);
    expect((await until('agents', 'echo', ['DEPLOYED'], 60_000)).status).toBe('DEPLOYED');
  }, 120_000);

  it('a platform restart re-attaches the replica: same process, no new container', async () => {
    const replicaOf = async () =>
      (await json<{ replica: string }>(await api('/v0/agents/echo/replicas/logs'))).replica;
    const before = await json<Echo>(await run('agents/echo', { method: 'POST', body: 'x' }));
    const container = await replicaOf();
    // Every container of echo (the crash-looping agents' come and go; they are not compared).
    const ofEcho = () =>
      engineIds(home).filter((id) => id.startsWith(container.split('-').slice(0, 2).join('-')));
    expect(ofEcho()).toEqual([container]);
    for (const id of engineIds(home)) ids.add(id);
    expect(await p.stop()).toBe(0);
    p = await start(home);
    const after = await json<Echo>(await run('agents/echo', { method: 'POST', body: 'y' }));
    expect(after.boot).toBe(before.boot);
    expect(await replicaOf()).toBe(container);
    expect(ofEcho()).toEqual([container]);
    expect((await record('agents', 'echo')).status).toBe('DEPLOYED');
  }, 180_000);

  it('enabled: false → DEACTIVATING (a stream in flight drains) → DEACTIVATED, 503 naming the state; delete removes the replica', async () => {
    const current = await json<{ metadata: object; spec: Record<string, unknown> }>(
      await api('/v0/agents/open'),
    );
    // A stream in flight when the agent is disabled runs to its end: the replica drains first.
    const streaming = await run('agents/open/stream', {}, null);
    expect(streaming.status).toBe(200);
    const put = await api('/v0/agents/open', {
      method: 'PUT',
      body: JSON.stringify({ metadata: current.metadata, spec: { ...current.spec, enabled: false } }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await json<{ status: string }>(put)).status).toBe('DEACTIVATING');
    expect((await streaming.text()).match(/^data: /gm)).toHaveLength(3);
    const off = await until('agents', 'open', ['DEACTIVATED'], 60_000);
    expect(off.events.map((e) => e.status)).toContain('DEACTIVATING');
    const refused = await run('agents/open', { method: 'POST', body: '{}' }, null);
    expect(refused.status).toBe(503);
    expect((await json<{ error: string }>(refused)).error).toBe(
      'agent open is DEACTIVATED (spec.enabled is false)',
    );
    const before = engineIds(home).filter((id) => id.startsWith('rp-')).length;
    const del = await api('/v0/functions/tools', { method: 'DELETE' });
    expect(del.status).toBe(200);
    await waitFor(
      'the function replica removed',
      async () => (engineIds(home).filter((id) => id.startsWith('rp-')).length < before ? true : undefined),
      30_000,
    );
    expect((await run('functions/tools/mcp', { method: 'POST', body: '{}' })).status).toBe(404);
  }, 120_000);
});
