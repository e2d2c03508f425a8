// The sandboxd supervisor (issue 19 item 6), run on the host with the host's static busybox: a
// child killed by SIGKILL is started again at once, a SIGTERM ends the loop after the child's
// graceful exit, and repeated quick deaths back off.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOT_ENV_PATH } from './boot-env.js';
import {
  DEFAULT_BUSYBOX,
  IN_SANDBOX,
  SANDBOXD_STATE_DIR,
  sandboxArgs,
  SUPERVISOR_SCRIPT,
} from './runtime-dir.js';

const skip = existsSync(DEFAULT_BUSYBOX) ? false : 'busybox not installed (Debian package busybox-static)';
const dirs: string[] = [];
const sups: ChildProcess[] = [];
afterEach(() => {
  for (const s of sups.splice(0)) if (s.exitCode === null && s.pid) process.kill(-s.pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The child: appends its pid to `starts`, exits 0 on SIGTERM, else runs until killed. */
const CHILD = `
  require('fs').appendFileSync(process.argv[1], process.pid + '\\n');
  process.on('SIGTERM', () => process.exit(0));
  setInterval(() => {}, 1000);
`;

function supervise(dir: string): ChildProcess {
  const script = SUPERVISOR_SCRIPT.replace(IN_SANDBOX.busybox, DEFAULT_BUSYBOX);
  const s = spawn(
    DEFAULT_BUSYBOX,
    ['sh', '-c', script, 'sup', process.execPath, '-e', CHILD, join(dir, 'starts')],
    {
      detached: true, // its own group, as under tini -g
      stdio: 'ignore',
    },
  );
  sups.push(s);
  return s;
}

const starts = (dir: string): number[] => {
  try {
    return readFileSync(join(dir, 'starts'), 'utf8').trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(skip)('the sandboxd supervisor', () => {
  it('restarts a SIGKILLed child at once, backs off on the next quick death, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tarmac-supervisor-'));
    dirs.push(dir);
    const sup = supervise(dir);
    await until(() => starts(dir).length === 1, 5000);
    process.kill(starts(dir)[0]!, 'SIGKILL');
    const t = Date.now();
    await until(() => starts(dir).length === 2, 5000);
    expect(Date.now() - t).toBeLessThan(900); // immediate (process start only)
    process.kill(starts(dir)[1]!, 'SIGKILL');
    const t2 = Date.now();
    await until(() => starts(dir).length === 3, 5000);
    expect(Date.now() - t2).toBeGreaterThanOrEqual(900); // died within 10 s: 1 s back-off
    expect(sup.exitCode).toBeNull();

    const exited = new Promise<number | null>((r) => sup.once('exit', (c) => r(c)));
    process.kill(-sup.pid!, 'SIGTERM'); // what tini -g does with the engine's stop
    expect(await exited).toBe(0);
    expect(starts(dir)).toHaveLength(3); // no restart after a stop
  }, 20_000);
});

describe('sandboxArgs', () => {
  const runtime = { hostPath: '/x', loader: '/.tarmac/lib/ld.so', entry: IN_SANDBOX.boot };
  const sandboxd = [
    '/.tarmac/lib/ld.so',
    '--library-path',
    IN_SANDBOX.libDir,
    IN_SANDBOX.node,
    IN_SANDBOX.boot,
    '--port',
    '8080',
    '--boot-env', // the sandbox's own env (boot-env.ts)
    BOOT_ENV_PATH,
  ];
  it('runs sandboxd under the busybox loop with its state dir when busybox is shipped', () => {
    expect(sandboxArgs({ ...runtime, supervised: true })).toEqual([
      IN_SANDBOX.tini,
      '-g',
      '--',
      IN_SANDBOX.busybox,
      'sh',
      '-c',
      SUPERVISOR_SCRIPT,
      'sandboxd-supervisor',
      ...sandboxd,
      '--state-dir',
      SANDBOXD_STATE_DIR,
    ]);
  });
  it('runs sandboxd straight under tini otherwise, as before', () => {
    expect(sandboxArgs({ ...runtime, supervised: false })).toEqual([
      IN_SANDBOX.tini,
      '-g',
      '--',
      ...sandboxd,
    ]);
  });
});
