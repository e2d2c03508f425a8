import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../config.js';
import { ProcessManager } from './manager.js';

const dirs: string[] = [];
const managers: ProcessManager[] = [];
afterEach(() => {
  for (const m of managers.splice(0)) m.killAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function manager(root: string, keepFinished: number): ProcessManager {
  const m = new ProcessManager({
    shell: '/bin/sh',
    shellArgs: ['-c'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    logDir: join(root, 'logs'),
    logFileMaxBytes: 1 << 20,
    keepAliveDisabled: false,
    clock: systemClock,
    stateDir: join(root, 'state'),
    keepFinished,
  });
  managers.push(m);
  return m;
}

describe('the process table is bounded (finished processes)', () => {
  it('keeps the newest finished processes, their logs and records, and every running one, across a restart', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sandboxd-table-'));
    dirs.push(root);
    const m = manager(root, 3);
    // Running and oldest: never dropped for being old.
    const sleeper = await m.start({ command: 'sleep 30', name: 'sleeper' }, root);
    for (let i = 0; i < 6; i++) {
      const p = await m.start({ command: `echo out-${i}`, name: `job-${i}` }, root);
      await p.exited();
    }
    const names = () => m.list().map((p) => p.req.name);
    expect(names()).toEqual(['sleeper', 'job-3', 'job-4', 'job-5']);
    expect(m.find('job-0')).toBeUndefined();
    expect(m.get('job-5').logs.read('stdout')).toBe('out-5\n');
    // Log files (three per process) and records of the dropped ones are gone.
    const logs = readdirSync(join(root, 'logs'));
    expect(logs.some((f) => f.startsWith('job-0') || f.startsWith('job-2'))).toBe(false);
    expect(logs.filter((f) => f.startsWith('job-')).length).toBe(9);
    expect(readdirSync(join(root, 'state/processes')).length).toBe(4);

    // A restarted sandboxd reads the same table back, and goes on bounding it.
    const again = manager(root, 3);
    again.restore();
    expect(again.list().map((p) => p.req.name)).toEqual(['sleeper', 'job-3', 'job-4', 'job-5']);
    expect(again.get('job-3').logs.read('stdout')).toBe('out-3\n');
    await (await again.start({ command: 'echo out-6', name: 'job-6' }, root)).exited();
    expect(again.list().map((p) => p.req.name)).toEqual(['sleeper', 'job-4', 'job-5', 'job-6']);
    expect(readdirSync(join(root, 'logs')).some((f) => f.startsWith('job-3'))).toBe(false);
    expect(again.get(sleeper.pid).running).toBe(true);
    again.kill(sleeper.pid);
    // Both tables see it end (the first as its parent, the second by polling) before the dir goes.
    await Promise.all([sleeper.exited(), again.get(sleeper.pid).exited()]);
  });
});
