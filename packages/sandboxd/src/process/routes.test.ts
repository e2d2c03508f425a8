/* eslint-disable @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON */
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, readLines, startDaemon, type TestDaemon } from '../test-support/harness.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon({ keepaliveMs: { logs: 100, watch: 100, exec: 100 } });
});
afterAll(() => t.stop());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const exec = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(t.base, 'POST', '/process', body, headers);

async function until(fn: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(25);
  }
  throw new Error('condition not met in time');
}

describe('POST /process (reference §1.3)', () => {
  it('runs through the shell in the working dir with env, waits, and answers ProcessResponse', async () => {
    const r = await exec({
      command: 'echo "$FOO" && pwd && echo oops >&2; exit 0',
      env: { FOO: 'bar' },
      waitForCompletion: true,
      name: 'first',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      pid: expect.stringMatching(/^\d+$/),
      name: 'first',
      command: expect.any(String),
      workingDir: t.wd,
      status: 'completed',
      exitCode: 0,
      stdout: `bar\n${t.wd}\n`,
      stderr: 'oops\n',
      restartOnFailure: false,
      maxRestarts: 0,
      restartCount: 0,
      keepAlive: false,
    });
    expect(r.body.logs).toContain('bar');
    expect(r.body.startedAt).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(r.body.completedAt).toMatch(/GMT$/);
  });

  it('gives a random 8-char name, reports failures, resolves workingDir and ~', async () => {
    writeFileSync(join(t.root, 'home/h.txt'), 'h');
    const r = await exec({ command: 'cat h.txt; exit 3', workingDir: '~', waitForCompletion: true });
    expect(r.body).toMatchObject({
      status: 'failed',
      exitCode: 3,
      stdout: 'h',
      workingDir: join(t.root, 'home'),
    });
    expect(r.body.name).toMatch(/^[\w-]{8}$/);
  });

  it('answers at once without waitForCompletion (completedAt "" on exec, null in list)', async () => {
    const r = await exec({ command: 'sleep 5', name: 'sleeper' });
    expect(r.body).toMatchObject({ status: 'running', completedAt: '' });
    const list = await call(t.base, 'GET', '/process');
    expect(list.body.find((p: any) => p.name === 'sleeper').completedAt).toBeNull();
    expect((await call(t.base, 'GET', '/process/sleeper')).body.completedAt).toBe('');
    await call(t.base, 'DELETE', '/process/sleeper/kill');
  });

  it('400s a running duplicate name, allows reuse once finished, and resolves the newest by name', async () => {
    const a = await exec({ command: 'sleep 5', name: 'dup' });
    const b = await exec({ command: 'true', name: 'dup' });
    expect(b).toMatchObject({
      status: 400,
      body: { error: "process with name 'dup' already exists and is running" },
    });
    await call(t.base, 'DELETE', '/process/dup/kill');
    await until(async () => (await call(t.base, 'GET', `/process/${a.body.pid}`)).body.status === 'killed');
    const c = await exec({ command: 'echo second', name: 'dup', waitForCompletion: true });
    expect(c.status).toBe(200);
    expect((await call(t.base, 'GET', '/process/dup')).body.pid).toBe(c.body.pid);
  });

  it('400s a bad body or missing working dir', async () => {
    expect((await exec({ name: 'x' })).status).toBe(400);
    expect((await exec({ command: 'true', workingDir: 'nope' })).status).toBe(400);
    expect((await call(t.base, 'POST', '/process', '{')).body.error).toMatch(/^invalid request body/);
  });

  it('times out the wait with 422 and leaves the process running', async () => {
    const r = await exec({ command: 'sleep 3', name: 'slow', waitForCompletion: true, timeout: 1 });
    expect(r).toMatchObject({ status: 422, body: { error: 'process timed out after 1 seconds' } });
    expect((await call(t.base, 'GET', '/process/slow')).body.status).toBe('running');
    await call(t.base, 'DELETE', '/process/slow/kill');
  });

  it('waits for ports bound to a routable address', async () => {
    const port = await freePort();
    const cmd = `exec node -e "require('net').createServer().listen(${port}, '0.0.0.0')"`;
    const r = await exec({ command: cmd, name: 'srv', waitForPorts: [port], timeout: 10 });
    expect(r).toMatchObject({ status: 200, body: { status: 'running' } });
    const ports = await call(t.base, 'GET', `/network/process/${r.body.pid}/ports`);
    expect(ports.body.ports).toContainEqual(
      expect.objectContaining({ localPort: port, protocol: 'tcp', state: 'LISTEN' }),
    );
    await call(t.base, 'DELETE', '/process/srv/kill');
  });

  it('422s when waitForPorts times out (loopback-only does not count)', async () => {
    const port = await freePort();
    const cmd = `exec node -e "require('net').createServer().listen(${port}, '127.0.0.1'); setTimeout(() => {}, 5000)"`;
    const r = await exec({ command: cmd, name: 'lo', waitForPorts: [port], timeout: 1 });
    expect(r).toMatchObject({ status: 422, body: { error: expect.stringMatching(/waiting for ports/) } });
    await call(t.base, 'DELETE', '/process/lo/kill');
  });

  it('restarts on failure up to maxRestarts with the marker, keeping the pid key', async () => {
    const r = await exec({
      command: 'echo run; exit 2',
      name: 'flaky',
      restartOnFailure: true,
      maxRestarts: 2,
    });
    await until(async () => (await call(t.base, 'GET', '/process/flaky')).body.status !== 'running');
    const g = await call(t.base, 'GET', `/process/${r.body.pid}`);
    expect(g.body).toMatchObject({
      status: 'failed',
      exitCode: 2,
      restartCount: 2,
      restartOnFailure: true,
      maxRestarts: 2,
    });
    expect(g.body.stdout.match(/^run$/gm)).toHaveLength(3);
    expect(g.body.stdout).toContain('[Process failed with exit code 2. Attempting restart 1/2...]');
  });

  it('streams NDJSON for Accept: text/event-stream, ending with result', async () => {
    const res = await fetch(`${t.base}/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ command: 'echo one; sleep 0.3; echo two >&2', waitForCompletion: true }),
    });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await readLines(res, (l) => l.some((x) => x.includes('"result"')))).map((l) =>
      JSON.parse(l),
    );
    expect(lines).toContainEqual({ type: 'stdout', data: 'one\n' });
    expect(lines).toContainEqual({ type: 'stderr', data: 'two\n' });
    expect(lines.some((l) => l.type === 'keepalive')).toBe(true);
    const last = lines[lines.length - 1];
    expect(last.type).toBe('result');
    expect(JSON.parse(last.data)).toMatchObject({ status: 'completed', stdout: 'one\n', stderr: 'two\n' });
  });

  it('ends a streamed exec with an error event on timeout', async () => {
    const res = await fetch(`${t.base}/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ command: 'sleep 3', name: 'stream-to', waitForCompletion: true, timeout: 1 }),
    });
    const lines = (await readLines(res, (l) => l.some((x) => x.includes('"error"')))).map((l) =>
      JSON.parse(l),
    );
    expect(lines[lines.length - 1]).toEqual({ type: 'error', data: 'process timed out after 1 seconds' });
    await call(t.base, 'DELETE', '/process/stream-to/kill');
  });
});

describe('process reads, logs and signals', () => {
  it('GET 404s unknown ids; /logs answers the full files', async () => {
    expect((await call(t.base, 'GET', '/process/999999999')).status).toBe(404);
    expect((await call(t.base, 'GET', '/process/nobody/logs')).status).toBe(404);
    await exec({ command: 'echo out; echo err >&2', name: 'logged', waitForCompletion: true });
    expect((await call(t.base, 'GET', '/process/logged/logs')).body).toEqual({
      stdout: 'out\n',
      stderr: 'err\n',
      logs: 'out\nerr\n',
    });
  });

  it('inlines only the last 64 KiB of output', async () => {
    const r = await exec({
      command: "head -c 100000 /dev/zero | tr '\\0' a",
      name: 'big',
      waitForCompletion: true,
    });
    expect(r.body.stdout).toHaveLength(64 * 1024);
    expect((await call(t.base, 'GET', '/process/big/logs')).body.stdout).toHaveLength(100_000);
  });

  it('/logs/stream replays, follows live with prefixes and keepalives, and ends at exit', async () => {
    await exec({ command: 'echo early; sleep 0.4; echo late >&2; sleep 0.2', name: 'streamed' });
    await sleep(100);
    const res = await fetch(`${t.base}/process/streamed/logs/stream`);
    expect(res.status).toBe(200);
    const lines = await readLines(res, () => false, 5000); // until the server ends the stream
    expect(lines[0]).toBe('stdout:early');
    expect(lines).toContain('stderr:late');
    expect(lines).toContain('[keepalive]');
  });

  it('stop sends SIGTERM to the whole group (status stopped), kill SIGKILL (killed); 404 when not running', async () => {
    const s = await exec({ command: 'sleep 30 & sleep 30; wait', name: 'tostop' });
    const st = await call(t.base, 'DELETE', '/process/tostop');
    expect(st).toEqual({
      status: 200,
      body: { message: 'Process stopped successfully' },
      headers: expect.anything(),
    });
    await until(async () => (await call(t.base, 'GET', `/process/${s.body.pid}`)).body.status === 'stopped');
    expect((await call(t.base, 'GET', '/process/tostop')).body.stdout).toContain(
      '[Process is being gracefully terminated]',
    );
    expect((await call(t.base, 'DELETE', '/process/tostop')).status).toBe(404);
    // No member of the group is left (polled: an orphaned child may be a zombie for a moment).
    await until(async () => {
      try {
        process.kill(-Number(s.body.pid), 0);
        return false;
      } catch {
        return true;
      }
    }, 3000);

    await exec({ command: 'trap "" TERM; sleep 30', name: 'tokill' });
    const k = await call(t.base, 'DELETE', '/process/tokill/kill');
    expect(k.body).toEqual({ message: 'Process killed successfully' });
    await until(async () => (await call(t.base, 'GET', '/process/tokill')).body.status === 'killed');
    expect((await call(t.base, 'GET', '/process/tokill')).body.stdout).toContain(
      '[Process is being forcefully killed]',
    );
    expect((await call(t.base, 'DELETE', '/process/tokill/kill')).status).toBe(404);
    expect((await call(t.base, 'DELETE', '/process/unknown')).status).toBe(404);
  });
});

describe('keepAlive (the standby signal)', () => {
  it('counts running keepAlive processes in GET /health', async () => {
    expect((await call(t.base, 'GET', '/health')).body.keepAlive).toBe(0);
    await exec({ command: 'sleep 30', name: 'ka', keepAlive: true });
    expect((await call(t.base, 'GET', '/health')).body).toMatchObject({
      keepAlive: 1,
      processes: expect.any(Number),
    });
    await call(t.base, 'DELETE', '/process/ka');
    await until(async () => (await call(t.base, 'GET', '/health')).body.keepAlive === 0);
  });

  it('auto-kills a keepAlive process at its timeout', async () => {
    const r = await exec({ command: 'sleep 30', name: 'ka-to', keepAlive: true, timeout: 1 });
    expect(r.body.keepAlive).toBe(true);
    await until(async () => (await call(t.base, 'GET', '/process/ka-to')).body.status === 'killed', 4000);
  });

  it('400s keepAlive when disabled', async () => {
    const d = await startDaemon({ keepAliveDisabled: true });
    try {
      const r = await call(d.base, 'POST', '/process', { command: 'true', keepAlive: true });
      expect(r).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(/keepAlive is not available/) },
      });
    } finally {
      await d.stop();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

// Issue 14 item 6: the vendor SDK's process.writeStdin / closeStdin.
describe('POST|DELETE /process/{id}/stdin', () => {
  const stdin = (id: string, body: string | Buffer, method = 'POST') =>
    fetch(`${t.base}/process/${id}/stdin`, { method, body: method === 'POST' ? body : undefined });

  it('feeds raw bytes to a process started with stdin: true, and EOF ends its input', async () => {
    const started = await exec({ command: 'cat; echo "[eof]"', name: 'echoer', stdin: true });
    expect(started.body).toMatchObject({ status: 'running', stdin: true });
    const first = await stdin('echoer', 'hello\n');
    expect([first.status, await first.json()]).toEqual([200, { message: '6 bytes written to stdin' }]);
    expect((await stdin('echoer', Buffer.from([0x7b, 0x22, 0x7d, 0x0a]))).status).toBe(200); // bytes as they are
    await until(async () => (await call(t.base, 'GET', '/process/echoer')).body.stdout === 'hello\n{"}\n');
    const closed = await stdin('echoer', '', 'DELETE');
    expect([closed.status, await closed.json()]).toEqual([200, { message: 'Stdin closed' }]);
    expect((await stdin('echoer', '', 'DELETE')).status).toBe(200); // idempotent
    await until(async () => (await call(t.base, 'GET', '/process/echoer')).body.status === 'completed');
    expect((await call(t.base, 'GET', '/process/echoer')).body.stdout).toBe('hello\n{"}\n[eof]\n');
    const late = await stdin('echoer', 'more');
    expect([late.status, ((await late.json()) as any).error]).toEqual([
      409,
      'stdin of process echoer is closed',
    ]);
  });

  it('409 without stdin, 404 for an unknown process, 413 above 8 MiB', async () => {
    await exec({ command: 'sleep 5', name: 'no-stdin' });
    const none = await stdin('no-stdin', 'x');
    expect(none.status).toBe(409);
    expect(((await none.json()) as any).error).toContain('has no stdin');
    expect((await stdin('no-stdin', '', 'DELETE')).status).toBe(409);
    expect((await stdin('nobody', 'x')).status).toBe(404);
    await exec({ command: 'cat > /dev/null', name: 'big', stdin: true });
    const big = await stdin('big', Buffer.alloc(8 * 1024 * 1024 + 1, 0x61));
    expect(big.status).toBe(413);
    expect((await stdin('big', Buffer.alloc(1024 * 1024, 0x61))).status).toBe(200);
    await call(t.base, 'DELETE', '/process/big/kill');
    await call(t.base, 'DELETE', '/process/no-stdin/kill');
  });

  it('a process that stops reading gets 503, not an unbounded buffer', async () => {
    // `sleep` never reads: the pipe (64 KiB) fills and the write cannot drain.
    await exec({ command: 'sleep 30', name: 'deaf', stdin: true });
    const res = await stdin('deaf', Buffer.alloc(4 * 1024 * 1024, 0x62));
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error).toBe('process deaf stopped reading its stdin');
    await call(t.base, 'DELETE', '/process/deaf/kill');
  }, 30_000);
});
