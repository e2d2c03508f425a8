// Issue 16, the run plane's foundation, end to end on the real platform, real buildah and real
// runc (the platform and the built echo agent: agents-fixture.ts): a Node server built from a
// folder (?upload=true) deploys as an agent — DEPLOYED only once its replica answered on PORT — and
// answers {inputs} and sub-paths through the run URL with the thread headers forwarded (two
// threads, two histories) and the platform's credentials not; SSE streams through, WebSocket
// upgrades are spliced; a private agent refuses no token and a wrong token (401) and another
// workspace's key (404); a public one needs none; a request sent while the replica starts is held,
// then served; a crashing image goes FAILED with its last log line, one that never listens FAILED
// too; a function's MCP endpoint answers the official MCP client with its session intact and gets
// its connection's secret as env; a replica reaches no other replica nor the platform directly
// (the attack). Logs, revisions, restarts, disable and delete: agents-lifecycle.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { json, missingBuildCapability } from '../sandboxes/support.js';
import { agentsFixture, OTHER } from './agents-fixture.js';
import type { Echo } from './app-image.js';

const skip = missingBuildCapability();

describe.skipIf(skip !== null)(`run plane: agents and functions${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const f = agentsFixture({ bridge: 'tarmacrp0', subnet: '10.190.0.0/16' });
  const { api, run, record, until, create } = f;

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
    const url = `${f.p.credentials.runUrl.replace(/^http/, 'ws')}/${f.ws}/agents/echo/socket?x=1`;
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${f.p.credentials.apiKey}`, 'x-service-thread-id': 't-ws' },
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
    const other = await run('agents/echo', { method: 'POST', body: '{}' }, f.otherKey);
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain('DEPLOYED');
    expect((await run('agents/nope', { method: 'POST', body: '{}' })).status).toBe(404);
    // The other key is valid (404 there, not 401): the 404 above is about access, not the key.
    const own = await fetch(`${f.p.credentials.runUrl}/${OTHER}/agents/echo`, {
      headers: { authorization: `Bearer ${f.otherKey}` },
    });
    expect(own.status).toBe(404);
    await create('agents', 'open', { public: true, runtime: { image: f.image, memory: 256 } });
    const held = await run('agents/open', { method: 'POST', body: 'anyone' }, null); // held while it starts
    expect(held.status).toBe(200);
    expect((await json<Echo>(held)).body).toBe('anyone');
  }, 120_000);

  it('a crashing image goes FAILED with its last log line; one that never listens FAILED too', async () => {
    await create('agents', 'crasher', {
      runtime: { image: f.image, memory: 256, envs: [{ name: 'MODE', value: 'crash' }] },
    });
    await create('agents', 'silent', {
      runtime: { image: f.image, memory: 256, envs: [{ name: 'MODE', value: 'silent' }] },
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
      runtime: { image: f.image, memory: 256 },
    });
    const transport = new StreamableHTTPClientTransport(
      new URL(`${f.p.credentials.runUrl}/${f.ws}/functions/tools/mcp`),
      {
        requestInit: { headers: { authorization: `Bearer ${f.p.credentials.apiKey}` } },
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
      (JSON.parse(readFileSync(join(f.home, 'sandboxes', id, 'sandbox.json'), 'utf8')) as { ip: string }).ip;
    const probe = async (target: string) => (await run(`agents/echo/probe?target=${target}`)).text();
    // The probe works: the replica reaches its own port.
    expect(await probe('127.0.0.1:8080')).toBe('reachable');
    // The function's replica (same workspace even) is not reachable across the bridge: isolated
    // bridge ports; its only door is the run URL, which authenticates.
    const other = ipOf(await replicaOf('functions', 'tools'));
    expect(other).toMatch(/^10\.190\./);
    expect(await probe(`${other}:8080`)).toBe('unreachable');
    // Nor the platform's own listener on the bridge gateway (only the egress proxy ports are open).
    expect(await probe(`10.190.0.1:${f.p.port}`)).toBe('unreachable');
  }, 60_000);
});
