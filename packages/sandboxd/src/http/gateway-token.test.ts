import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../test-support/harness.js';
import { GATEWAY_TOKEN_HEADER, tokenMatches } from './gateway-token.js';

const TOKEN = 'a'.repeat(64);

describe('tokenMatches', () => {
  it('accepts exactly the expected token, and anything when none is configured', () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(TOKEN, `${TOKEN}x`)).toBe(false);
    expect(tokenMatches(TOKEN, 'a'.repeat(63) + 'b')).toBe(false);
    expect(tokenMatches(TOKEN, '')).toBe(false);
    expect(tokenMatches(TOKEN, undefined)).toBe(false);
    expect(tokenMatches(TOKEN, [TOKEN, TOKEN])).toBe(false); // a repeated header is not a token
    expect(tokenMatches(undefined, undefined)).toBe(true);
  });
});

/** A raw upgrade request: the status line sandboxd answers with. */
function upgradeStatus(base: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/terminal/ws`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('sandboxd with a gateway token (issue 19 item 3)', () => {
  let t: TestDaemon;
  beforeAll(async () => {
    t = await startDaemon({ gatewayToken: TOKEN });
  });
  afterAll(() => t.stop());

  it('runs no command for a caller without the token, or with a wrong one', async () => {
    const exec = (headers: Record<string, string>) =>
      fetch(`${t.base}/process`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ command: `touch ${t.wd}/pwned`, waitForCompletion: true }),
      });
    const attempts: Record<string, string>[] = [
      {},
      { [GATEWAY_TOKEN_HEADER]: 'b'.repeat(64) },
      { authorization: `Bearer ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await exec(headers);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toContain('sandbox token');
    }
    expect(
      (await fetch(`${t.base}/filesystem/${t.wd}/pwned`, { headers: { [GATEWAY_TOKEN_HEADER]: TOKEN } }))
        .status,
    ).toBe(404);
    const ok = await exec({ [GATEWAY_TOKEN_HEADER]: TOKEN });
    expect(ok.status).toBe(200);
  });

  it('answers /health without the token with the status alone (readiness), in full with it', async () => {
    const bare = (await (await fetch(`${t.base}/health`)).json()) as Record<string, unknown>;
    expect(bare).toEqual({ status: 'ok' });
    const full = (await (
      await fetch(`${t.base}/health`, { headers: { [GATEWAY_TOKEN_HEADER]: TOKEN } })
    ).json()) as Record<string, unknown>;
    expect(full).toMatchObject({ status: 'ok', keepAlive: 0 });
  });

  it('refuses the terminal WebSocket without the token', async () => {
    expect(await upgradeStatus(t.base, {})).toBe(401);
    expect(await upgradeStatus(t.base, { [GATEWAY_TOKEN_HEADER]: TOKEN })).toBe(101);
  });
});
