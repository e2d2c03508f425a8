import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessRecords, startTicks, stillRunning, type ProcessRecord } from './records.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (key: number, status: ProcessRecord['status']): ProcessRecord => ({
  key: String(key),
  req: { command: 'true', name: `p${key}` },
  workingDir: '/',
  startedAt: new Date(1_000_000 + key).toISOString(),
  osPid: key,
  startTicks: undefined,
  logBase: `p${key}-${key}`,
  fifos: undefined,
  status,
  exitCode: 0,
  completedAt: status === 'running' ? undefined : new Date(2_000_000 + key).toISOString(),
  restartCount: 0,
  ending: undefined,
  lifeDeadline: undefined,
});

describe('the process table on disk (issue 19 item 6)', () => {
  it('round-trips records and keeps only the newest finished ones, never a running one', () => {
    const parent = mkdtempSync(join(tmpdir(), 'records-'));
    dirs.push(parent);
    const dir = join(parent, 'processes');
    const r = new ProcessRecords(dir, 3);
    r.save(record(1, 'running'));
    for (let k = 2; k <= 6; k++) r.save(record(k, 'completed'));
    r.save(record(5, 'completed')); // saved again: still counted once
    expect(readdirSync(dir).sort()).toEqual(['1.json', '4.json', '5.json', '6.json']);
    const loaded = new ProcessRecords(dir, 2).loadAll();
    expect(loaded.map((x) => [x.key, x.status])).toEqual([
      ['1', 'running'],
      ['5', 'completed'],
      ['6', 'completed'],
    ]);
    expect(readdirSync(dir)).toHaveLength(3);
  });

  it('tells a live process from a gone one or a recycled pid by its start time', () => {
    const ticks = startTicks('/proc', process.pid);
    expect(ticks).toMatch(/^\d+$/);
    expect(stillRunning('/proc', process.pid, ticks)).toBe(true);
    expect(stillRunning('/proc', process.pid, '1')).toBe(false); // same pid, other start: recycled
    expect(stillRunning('/proc', 999_999_999, ticks)).toBe(false);
  });
});
