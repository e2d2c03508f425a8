// The warm pool's claim (claim.ts): only a sandboxd started pooled has the route, it takes one
// claim, processes started afterwards see the claimed env, and a restarted sandboxd keeps it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandboxd } from './sandboxd.js';
import { startDaemon, type TestDaemon } from './test-support/harness.js';

const daemons: TestDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
});

async function start(pooled: boolean, bootEnvFile?: string): Promise<TestDaemon> {
  const d = await startDaemon({ pooled, ...(bootEnvFile ? { bootEnvFile } : {}) });
  daemons.push(d);
  return d;
}

const claim = (d: TestDaemon, env: Record<string, string>) =>
  fetch(`${d.base}/_tarmac/claim`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ env }),
  });

async function run(d: TestDaemon, command: string): Promise<string> {
  const res = await fetch(`${d.base}/process`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command, waitForCompletion: true }),
  });
  const j = (await res.json()) as { stdout: string };
  return j.stdout.trim();
}

describe('POST /_tarmac/claim', () => {
  it('is not a route of a sandboxd that was not started pooled (a user cannot rewrite the env)', async () => {
    const d = await start(false);
    expect((await claim(d, { HOSTNAME: 'evil' })).status).toBe(404);
    expect(await run(d, 'echo "[$HOSTNAME]"')).toBe('[]');
  });

  it('gives processes started after it the claimed env, once', async () => {
    const d = await start(true);
    expect(await run(d, 'echo "[$HOSTNAME][$SECRET_VAR]"')).toBe('[][]');
    expect((await claim(d, { HOSTNAME: 'mine', SECRET_VAR: 's3cret' })).status).toBe(200);
    expect(await run(d, 'echo "[$HOSTNAME][$SECRET_VAR]"')).toBe('[mine][s3cret]');
    const again = await claim(d, { HOSTNAME: 'someone-else' });
    expect(again.status).toBe(409);
    expect(await run(d, 'echo "[$HOSTNAME]"')).toBe('[mine]');
  });

  it('warms a pooled sandboxd before its claim only; a sandboxd not pooled has no such route', async () => {
    // Its body is a process request, read the way POST /process reads one (claim.ts).
    const warm = (d: TestDaemon) =>
      fetch(`${d.base}/_tarmac/warm`, {
        method: 'POST',
        body: '{"command":"true","waitForCompletion":true}',
      });
    expect((await warm(await start(false))).status).toBe(404);
    const d = await start(true);
    expect((await warm(d)).status).toBe(200);
    expect(readdirSync(d.config.logDir).join(' ')).not.toContain('tarmac-warm'); // its logs are gone
    expect(await run(d, 'echo warm')).toBe('warm');
    // The warm-up's shell is nobody's process: the table shows only what users started.
    const listed = (await (await fetch(`${d.base}/process`)).json()) as { command: string }[];
    expect(listed.map((p) => p.command)).toEqual(['echo warm']);
    expect((await claim(d, { HOSTNAME: 'mine' })).status).toBe(200);
    expect((await warm(d)).status).toBe(409);
  });

  it('refuses a malformed body', async () => {
    const d = await start(true);
    const res = await fetch(`${d.base}/_tarmac/claim`, { method: 'POST', body: '{"env":{"A":1}}' });
    expect(res.status).toBe(400);
  });

  it('survives a sandboxd restart: the new daemon starts processes with the claimed env', async () => {
    const d = await start(true);
    expect((await claim(d, { HOSTNAME: 'kept' })).status).toBe(200);
    // A second daemon over the same state dir with the boot env, as the supervisor restarts it.
    const env: Record<string, string> = { PATH: d.config.env.PATH ?? '/usr/bin:/bin' };
    const again = createSandboxd({ ...d.config, env, pooled: true });
    expect(env.HOSTNAME).toBe('kept');
    await again.close();
  });
});

describe('the claim the engine writes into the boot env file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  /** A boot env file as the engine writes it (packages/engine boot-env.ts), pooled at first. */
  function bootEnvFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'boot-env-'));
    dirs.push(dir);
    const file = join(dir, 'boot-env.json');
    writeFileSync(file, JSON.stringify({ HOSTNAME: 'sb-pooled', TARMAC_SANDBOXD_POOLED: '1', EGRESS: 'e' }));
    return file;
  }
  const claimed = {
    HOSTNAME: 'mine',
    EGRESS: 'e',
    SECRET_VAR: 's3cret',
    TARMAC_SANDBOXD_TOKEN: 'tok',
    TARMAC_SANDBOXD_MCP_HOSTS: 'mine.example',
  };
  const probe = 'echo "[$HOSTNAME][$SECRET_VAR][$TARMAC_SANDBOXD_TOKEN][$TARMAC_SANDBOXD_MCP_HOSTS]"';

  it('gives the next request its env, without sandboxd own variables, and takes it once', async () => {
    const file = bootEnvFile();
    const d = await start(true, file);
    // /mcp refuses a browser page of the claimed sandbox's host until the claim (mcp/host-guard.ts).
    const mcpFrom = (origin: string) =>
      fetch(`${d.base}/mcp`, {
        method: 'POST',
        headers: {
          origin,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    expect((await mcpFrom('http://mine.example')).status).toBe(403);
    expect(await run(d, probe)).toBe('[][][][]');
    writeFileSync(file, JSON.stringify(claimed));
    expect(await run(d, probe)).toBe('[mine][s3cret][][]');
    expect((await mcpFrom('http://mine.example')).status).not.toBe(403);
    expect((await mcpFrom('http://evil.example')).status).toBe(403);
    // Claimed: the route refuses a second claim, and a later rewrite changes nothing.
    expect((await claim(d, { HOSTNAME: 'someone-else' })).status).toBe(409);
    writeFileSync(file, JSON.stringify({ ...claimed, HOSTNAME: 'other' }));
    expect(await run(d, 'echo "[$HOSTNAME]"')).toBe('[mine]');
    const warm = await fetch(`${d.base}/_tarmac/warm`, { method: 'POST', body: '{"command":"true"}' });
    expect(warm.status).toBe(409);
  });

  it('ignores the file while it is the pooled boot one or cut short (read while rewritten)', async () => {
    const file = bootEnvFile();
    const d = await start(true, file);
    writeFileSync(file, JSON.stringify(claimed).slice(0, 30));
    expect(await run(d, probe)).toBe('[][][][]');
    writeFileSync(file, JSON.stringify({ ...claimed, TARMAC_SANDBOXD_POOLED: '1' }));
    expect(await run(d, probe)).toBe('[][][][]');
    // Not taken: the whole file, once there, is.
    writeFileSync(file, JSON.stringify(claimed));
    expect(await run(d, probe)).toBe('[mine][s3cret][][]');
  });

  it("is applied by a /health (the claim's ping), before the user's first request", async () => {
    const file = bootEnvFile();
    const d = await start(true, file);
    expect((await fetch(`${d.base}/health`)).status).toBe(200);
    writeFileSync(file, JSON.stringify(claimed));
    expect((await fetch(`${d.base}/health`)).status).toBe(200);
    // Taken by the ping: the file changing back is never read again.
    writeFileSync(file, JSON.stringify({ HOSTNAME: 'sb-pooled', TARMAC_SANDBOXD_POOLED: '1', EGRESS: 'e' }));
    expect(await run(d, probe)).toBe('[mine][s3cret][][]');
  });

  it('is never read by a sandboxd that was not started pooled', async () => {
    const file = bootEnvFile();
    const d = await start(false, file);
    writeFileSync(file, JSON.stringify(claimed));
    expect(await run(d, probe)).toBe('[][][][]');
  });
});
