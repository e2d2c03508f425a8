// Issue 19 item 6: sandboxd killed with SIGKILL (the OOM killer, a bug) and started again by its
// supervisor keeps the processes it had started. The real bundle runs as a child process with a
// state dir; it is SIGKILLed mid-work and a second one started on the same state dir.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTicks } from './process/records.js';
import { call, readLines, until } from './test-support/harness.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
let dir = '';
let port = 0;
let base = '';
let child: ChildProcess | undefined;
const groups: number[] = [];

function startBundle(): ChildProcess {
  const c = spawn(
    process.execPath,
    [join(pkg, 'dist/sandboxd.bundle.mjs'), '--port', String(port), '--state-dir', join(dir, 'state')],
    {
      cwd: join(dir, 'work'),
      env: { PATH: process.env.PATH, HOME: dir, SANDBOX_LOG_DIR: join(dir, 'logs'), SHELL: '/bin/sh' },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return c;
}

async function healthy(): Promise<boolean> {
  return fetch(`${base}/health`).then(
    (r) => r.ok,
    () => false,
  );
}

/** Running (a zombie waiting for whoever adopted the orphan on this host is not). */
const alive = (pid: number): boolean => startTicks('/proc', pid) !== undefined;

beforeAll(async () => {
  execFileSync(process.execPath, [join(pkg, 'scripts/bundle.mjs')], { stdio: 'inherit' });
  dir = mkdtempSync(join(tmpdir(), 'sandboxd-restart-'));
  mkdirSync(join(dir, 'work'));
  port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  base = `http://127.0.0.1:${port}`;
  child = startBundle();
  await until(healthy, 10_000);
}, 60_000);

afterAll(() => {
  child?.kill('SIGKILL');
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('a SIGKILLed sandboxd started again on its state dir', () => {
  it('re-adopts running processes with their output, and reports the rest', async () => {
    const counter = await call(base, 'POST', '/process', {
      name: 'counter',
      command: 'i=0; while :; do echo tick $i; echo $i > counter.txt; i=$((i+1)); sleep 0.05; done',
    });
    expect(counter.status).toBe(200);
    const pid = Number(counter.body.pid);
    groups.push(pid);
    const done = await call(base, 'POST', '/process', {
      name: 'done',
      command: 'echo finished; exit 0',
      waitForCompletion: true,
    });
    expect(done.body.status).toBe('completed');
    const dies = await call(base, 'POST', '/process', { name: 'dies', command: 'sleep 0.4; exit 3' });
    groups.push(Number(dies.body.pid));
    // Writes more than a pipe holds: blocked while sandboxd is down, drained by the next one.
    const bulk = await call(base, 'POST', '/process', {
      name: 'bulk',
      command: 'sleep 0.3; head -c 300000 /dev/zero | tr "\\0" a; echo; echo END',
    });
    groups.push(Number(bulk.body.pid));
    await until(() => existsSync(join(dir, 'work/counter.txt')), 5000);

    const killed = new Promise((r) => child?.once('exit', r));
    child?.kill('SIGKILL');
    await killed;
    // Down for a while: the counter keeps writing (its stdout is a FIFO it holds open itself, so no
    // SIGPIPE), and `dies` ends with nobody to see its exit code.
    const before = Number(readFileSync(join(dir, 'work/counter.txt'), 'utf8'));
    await new Promise((r) => setTimeout(r, 800));
    expect(alive(pid)).toBe(true);
    expect(Number(readFileSync(join(dir, 'work/counter.txt'), 'utf8'))).toBeGreaterThan(before);

    child = startBundle();
    await until(healthy, 10_000);
    const list = await call(base, 'GET', '/process');
    const byName = Object.fromEntries(
      (list.body as { name: string; status: string; exitCode: number; pid: string }[]).map((p) => [
        p.name,
        p,
      ]),
    );
    expect(byName.counter).toMatchObject({ pid: String(pid), status: 'running' });
    expect(byName.done).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(byName.dies).toMatchObject({ status: 'failed', exitCode: -1 });
    expect((await call(base, 'GET', '/process/done/logs')).body.stdout).toBe('finished\n');
    await until(async () => (await call(base, 'GET', '/process/bulk')).body.status !== 'running', 10_000);
    const bulkOut = (await call(base, 'GET', '/process/bulk/logs')).body.stdout as string;
    expect(bulkOut.startsWith('a'.repeat(300_000) + '\nEND\n')).toBe(true); // nothing lost

    // Output written while sandboxd was down was kept in the FIFO and is in the logs now; live
    // output streams again.
    const logs = await fetch(`${base}/process/counter/logs/stream`);
    const lines = await readLines(logs, (l) => l.length > 5 && /tick/.test(l.at(-1) ?? ''), 5000);
    const ticks = lines.filter((l) => l.startsWith('stdout:tick')).map((l) => Number(l.split(' ')[1]));
    expect(ticks.slice(0, 3)).toEqual([0, 1, 2]);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]).toBe((ticks[i - 1] ?? 0) + 1);
    await until(async () => {
      const l = (await call(base, 'GET', '/process/counter/logs')).body.stdout as string;
      return l.includes(`tick ${Number(readFileSync(join(dir, 'work/counter.txt'), 'utf8'))}`);
    }, 5000);

    // Stop reaches the adopted group; its end is noticed without being its parent.
    expect((await call(base, 'DELETE', '/process/counter')).status).toBe(200);
    await until(async () => (await call(base, 'GET', '/process/counter')).body.status === 'stopped', 5000);
    expect(alive(pid)).toBe(false);
  }, 30_000);
});
