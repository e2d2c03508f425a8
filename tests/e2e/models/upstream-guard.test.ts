// Attack (issue 18 "Upstream address guard"): a workspace member who can write model records
// points a model's base URL at the platform's internals — loopback, the cloud metadata address,
// the platform's own port, a private network, the same addresses in other notations — and asks the
// gateway to call it. Without TARMAC_MODEL_UPSTREAM_ALLOW every one is refused (403) and nothing
// reaches the listener behind it; with 127.0.0.1/32 allowed, loopback opens but the platform's own
// port still does not.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loose reads

async function setUp(p: RunningPlatform, name: string, baseUrl: string): Promise<void> {
  const ws = p.credentials.workspace;
  const conn = await p.api(`/v0/integrations/connections?workspace=${ws}`, {
    method: 'POST',
    body: JSON.stringify({
      metadata: { name: `${name}-conn` },
      spec: { integration: 'openai', config: { baseUrl }, secret: { OPENAI_API_KEY: 'sk-secret-upstream' } },
    }),
  });
  expect(conn.status).toBe(200);
  const model = await p.api(`/v0/models/${name}?workspace=${ws}`, {
    method: 'PUT',
    body: JSON.stringify({
      metadata: { name },
      spec: { runtime: { type: 'openai', model: 'm' }, integrationConnections: [`${name}-conn`] },
    }),
  });
  expect(model.status).toBe(200);
}

async function chat(p: RunningPlatform, name: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(
    `${p.credentials.runUrl}/${p.credentials.workspace}/models/${name}/chat/completions`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    },
  );
  return { status: res.status, body: (await res.json()) as Json };
}

describe('model upstreams cannot reach the platform or private networks', () => {
  let victim: Server;
  let victimPort = 0;
  let hits = 0;
  let strict: RunningPlatform;
  let allowing: RunningPlatform;

  beforeAll(async () => {
    // A service on loopback the attacker wants to reach (like PostgreSQL or an admin port).
    victim = createServer((_req, res) => {
      hits++;
      res.end('{"secret":"internal"}');
    });
    await new Promise<void>((r) => victim.listen(0, '127.0.0.1', r));
    const a = victim.address();
    victimPort = typeof a === 'object' && a ? a.port : 0;
    strict = await startPlatform({ env: { TARMAC_MODEL_RETRIES: '0' } });
    allowing = await startPlatform({
      env: { TARMAC_MODEL_UPSTREAM_ALLOW: '127.0.0.1/32', TARMAC_MODEL_RETRIES: '0' },
    });
  }, 120_000);
  afterAll(async () => {
    for (const p of [strict, allowing]) {
      await p?.stop();
      if (p) removeHome(p.home);
    }
    victim?.close();
  });

  const targets = () => [
    ['loopback', `http://127.0.0.1:${victimPort}/v1`],
    ['localhost name', `http://localhost:${victimPort}/v1`],
    ['ipv4-mapped ipv6', `http://[::ffff:127.0.0.1]:${victimPort}/v1`],
    ['decimal ipv4', `http://2130706433:${victimPort}/v1`],
    ['cloud metadata', 'http://169.254.169.254/latest/v1'],
    ['private network', 'http://10.168.0.1/v1'],
    ['own port', `http://127.0.0.1:${strict.port}/v1`],
  ];

  it('refuses every non-public upstream without TARMAC_MODEL_UPSTREAM_ALLOW', async () => {
    for (const [i, [what, url]] of targets().entries()) {
      await setUp(strict, `attack-${i}`, url!);
      const r = await chat(strict, `attack-${i}`);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(r.body.error.code).toBe('upstream_address_refused');
    }
    expect(hits).toBe(0);
  });

  it('with 127.0.0.1/32 allowed, loopback opens but the platform itself stays unreachable', async () => {
    await setUp(allowing, 'allowed', `http://127.0.0.1:${victimPort}/v1`);
    const ok = await chat(allowing, 'allowed');
    expect(ok.status).toBe(200);
    expect(hits).toBe(1);
    await setUp(allowing, 'self', `http://127.0.0.1:${allowing.port}/v1`);
    const self = await chat(allowing, 'self');
    expect(self.status).toBe(403);
    await setUp(allowing, 'metadata', 'http://169.254.169.254/v1');
    expect((await chat(allowing, 'metadata')).status).toBe(403);
  });
});
