// Issue 19 item 6, on the real platform and a real runc sandbox: a multipart upload dropped
// mid-stream through the platform's gateway used to crash sandboxd (an unhandled rejection), which
// ended the container: the sandbox went FAILED and every process in it was lost. Now the drop is a
// 400 nobody reads, sandboxd keeps running (same start time), and even a SIGKILL of sandboxd (the
// OOM killer, a bug) only restarts it: the sandbox stays DEPLOYED, the user's process keeps running
// and writing, and the new sandboxd lists it again.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  engineIds,
  exec,
  getSandbox,
  json,
  missingCapability,
  RUNC_ROOT,
  sbx,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';

const skip = missingCapability();
const NAME = 'faults-box';
// A bridge and subnet of this file's own (named for sandboxd faults), so parallel e2e runs on the
// machine never share one.
const NETWORK = { TARMAC_BRIDGE: 'tarmacsdf0', TARMAC_SUBNET: '10.237.0.0/16' };
let p: RunningPlatform | undefined;

interface Health {
  status: string;
  startedAt: string;
  processes: number;
}
interface Proc {
  pid: string;
  name: string;
  status: string;
  stdout: string;
}

async function health(): Promise<Health | undefined> {
  const res = await sbx(p!, NAME, '/health').catch(() => undefined);
  if (!res || res.status !== 200) return undefined;
  return json<Health>(res);
}

async function counter(): Promise<number> {
  const r = await exec(p!, NAME, 'cat /tmp/counter');
  return Number(r.stdout);
}

/** The host pids of the sandbox's processes, walking down from runc's init (tini). */
function childrenOf(pid: number): number[] {
  const out = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return out === '' ? [] : out.split(' ').map(Number);
}
const cmdline = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');

function sandboxdHostPid(): number {
  const [id] = engineIds(p!.home);
  const state = JSON.parse(readFileSync(join(RUNC_ROOT, id!, 'state.json'), 'utf8')) as {
    init_process_pid: number;
  };
  // tini → the busybox supervisor → sandboxd (node through the injected ld.so).
  const queue = [state.init_process_pid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    // The loader's own command line (the supervisor's names it too, as its arguments).
    if (/^\/\.tarmac\/lib\/ld-\S+ --library-path/.test(cmdline(pid))) return pid;
    queue.push(...childrenOf(pid));
  }
  throw new Error('sandboxd not found under the container init');
}

beforeAll(async () => {
  if (skip) return;
  p = await startSandboxPlatform({ env: NETWORK });
  await createSandbox(p, NAME);
}, 15 * 60_000);

afterAll(async () => {
  await cleanUp(p, [NAME]);
}, 120_000);

describe.skipIf(skip)(`sandboxd faults${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let pid = '';

  it('a multipart upload dropped mid-stream through the gateway leaves sandboxd and its processes up', async () => {
    const start = await sbx(p!, NAME, '/process', {
      method: 'POST',
      body: JSON.stringify({
        name: 'counter',
        command: 'i=0; while :; do echo $i > /tmp/counter; echo tick $i; i=$((i+1)); sleep 0.1; done',
      }),
    });
    const proc = await json<Proc>(start);
    expect(start.status, JSON.stringify(proc)).toBe(200);
    pid = proc.pid;
    const before = await waitFor('sandboxd health', health);

    // Half a body, then the socket is gone (a client going away, a platform restart).
    const url = new URL(p!.url);
    const boundary = 'tarmacfault';
    const path = `/${p!.credentials.workspace}/sandboxes/${NAME}/filesystem/tmp/dropped.bin`;
    const s = connect(Number(url.port), '127.0.0.1');
    s.on('error', () => undefined);
    await new Promise((r) => s.once('connect', r));
    s.write(
      `PUT ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${p!.credentials.apiKey}\r\n` +
        `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: 50000000\r\n\r\n` +
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="d.bin"\r\n\r\n`,
    );
    s.write(Buffer.alloc(1024 * 1024, 7));
    await new Promise((r) => setTimeout(r, 300));
    s.destroy();
    await new Promise((r) => setTimeout(r, 1000));

    const after = await waitFor('sandboxd health', health, 5000);
    expect(after.startedAt).toBe(before.startedAt); // not even restarted: it did not crash
    expect((await getSandbox(p!, NAME)).status).toBe('DEPLOYED');
    const got = await json<Proc>(await sbx(p!, NAME, `/process/${pid}`));
    expect(got.status).toBe('running');
    const ls = await exec(p!, NAME, 'ls -a /tmp');
    expect(ls.stdout).not.toMatch(/dropped\.bin|\.upload-/); // the partial file was removed
  }, 60_000);

  it('sandboxd killed with SIGKILL is restarted; the sandbox stays DEPLOYED and the process lives on', async () => {
    const before = await waitFor('sandboxd health', health);
    const n0 = await counter();
    process.kill(sandboxdHostPid(), 'SIGKILL');
    const killedAt = Date.now();

    // Back within a bounded time (the supervisor restarts it at once; node's start is the cost).
    const back = await waitFor(
      'a restarted sandboxd',
      async () => {
        const h = await health();
        return h && h.startedAt !== before.startedAt ? h : undefined;
      },
      10_000,
    ).catch((err: unknown) => {
      const [id] = engineIds(p!.home);
      const log = readFileSync(join(p!.home, 'sandboxes', id!, 'logs/container.log'), 'utf8');
      throw new Error(`${String(err)}; container log:\n${log.slice(-3000)}`);
    });
    const downMs = Date.now() - killedAt;
    console.log(`sandboxd back after ${downMs} ms`);
    expect(downMs).toBeLessThan(5000);
    expect(back.processes).toBeGreaterThanOrEqual(1);

    // Not FAILED, neither now nor after the controller's next looks.
    for (let i = 0; i < 5; i++) {
      expect((await getSandbox(p!, NAME)).status).toBe('DEPLOYED');
      await new Promise((r) => setTimeout(r, 400));
    }
    const list = await json<Proc[]>(await sbx(p!, NAME, '/process'));
    expect(list.find((x) => x.pid === pid)).toMatchObject({ name: 'counter', status: 'running' });
    // Same pid, still alive and still writing.
    expect((await exec(p!, NAME, `kill -0 ${pid} && echo alive`)).stdout).toBe('alive\n');
    const n1 = await counter();
    expect(n1).toBeGreaterThan(n0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await counter()).toBeGreaterThan(n1);
    // Its output kept flowing to the logs across the restart (FIFOs the process holds open).
    const logs = await json<{ stdout: string }>(await sbx(p!, NAME, `/process/${pid}/logs`));
    const ticks = logs.stdout
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[1]));
    expect(ticks.at(-1)).toBeGreaterThan(n1 - 5);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]).toBe((ticks[i - 1] ?? 0) + 1);

    // And it can still be stopped through the new sandboxd.
    expect((await sbx(p!, NAME, `/process/${pid}`, { method: 'DELETE' })).status).toBe(200);
    await waitFor('counter stopped', async () => {
      const g = await json<Proc>(await sbx(p!, NAME, `/process/${pid}`));
      return g.status === 'stopped' ? g : undefined;
    });
  }, 90_000);
});
