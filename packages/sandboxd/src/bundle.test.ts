// The esbuild bundle is what runs in a sandbox: build it, copy it with lib/ (chunks, pty.node) to a bare
// directory (no node_modules anywhere above it), run it like the engine does, and use it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { call } from './test-support/harness.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
let dir = '';
let child: ChildProcess | undefined;
let base = '';

beforeAll(async () => {
  execFileSync(process.execPath, [join(pkg, 'scripts/bundle.mjs')], { stdio: 'inherit' });
  dir = mkdtempSync(join(tmpdir(), 'sandboxd-bundle-'));
  mkdirSync(join(dir, 'tarmac/lib'), { recursive: true });
  mkdirSync(join(dir, 'work'));
  cpSync(join(pkg, 'dist/sandboxd.bundle.mjs'), join(dir, 'tarmac/sandboxd.mjs'));
  cpSync(join(pkg, 'dist/lib'), join(dir, 'tarmac/lib'), { recursive: true }); // chunks, pty.node
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  child = spawn(process.execPath, [join(dir, 'tarmac/sandboxd.mjs'), '--port', String(port)], {
    cwd: join(dir, 'work'),
    env: { PATH: process.env.PATH, HOME: dir, SANDBOX_LOG_DIR: join(dir, 'logs'), SHELL: '/bin/sh' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  base = `http://127.0.0.1:${port}`;
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      if (Date.now() > end) throw new Error('bundle did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}, 60_000);

afterAll(() => {
  child?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('the sandboxd bundle', () => {
  it('serves the API with every dependency inlined', async () => {
    expect((await call(base, 'GET', '/health')).body.status).toBe('ok');
    expect((await call(base, 'PUT', '/filesystem/a.txt', { content: 'x' })).body.path).toBe(
      join(dir, 'work/a.txt'),
    );
    const p = await call(base, 'POST', '/process', { command: 'echo bundled', waitForCompletion: true });
    expect(p.body.stdout).toBe('bundled\n');
    const mcp = await call(
      base,
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: 'application/json, text/event-stream' },
    );
    expect(mcp.body.result.tools.length).toBeGreaterThan(10);
  });

  it('loads pty.node from lib/ next to the bundle and runs a terminal', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/terminal/ws`);
    const out = await new Promise<string>((resolve, reject) => {
      let acc = '';
      ws.on('open', () => ws.send(JSON.stringify({ type: 'input', data: 'echo $((6*7))-ok\n' })));
      ws.on('message', (m) => {
        const msg = JSON.parse(String(m)) as { type: string; data: string };
        if (msg.type === 'error') reject(new Error(msg.data));
        acc += msg.data;
        if (acc.includes('42-ok')) resolve(acc);
      });
      setTimeout(() => reject(new Error(`timeout: ${acc}`)), 5000);
    });
    expect(out).toContain('42-ok');
    ws.close();
  });

  it('on SIGTERM lets its processes finish (they get SIGTERM), then exits 0', async () => {
    const cmd = `trap 'sleep 0.3; echo done > ${join(dir, 'work/term.txt')}; exit 0' TERM; while :; do sleep 0.05; done`;
    expect((await call(base, 'POST', '/process', { command: cmd, name: 'graceful' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const code = await new Promise<number | null>((resolve) => {
      child?.once('exit', (c) => resolve(c));
      child?.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(readFileSync(join(dir, 'work/term.txt'), 'utf8')).toBe('done\n');
    child = undefined;
  });
});
