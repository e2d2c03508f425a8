import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Runc } from './runc.js';
import type { CommandRunner } from './runner.js';

const noRunner = { run: () => Promise.reject(new Error('no commands here')) } as unknown as CommandRunner;
const stateOf = (pid: number, start: number) =>
  JSON.stringify({ init_process_pid: pid, init_process_start: start, config: { pad: 'x'.repeat(100) } });

describe('Runc.state', () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('follows runc replacing state.json, and forgets a container whose file is gone', () => {
    root = mkdtempSync(join(tmpdir(), 'runc-state-'));
    mkdirSync(join(root, 'sb-1'));
    const file = join(root, 'sb-1', 'state.json');
    writeFileSync(file, stateOf(100, 5));
    const runc = new Runc(noRunner, root);
    expect(runc.state('sb-1')).toEqual({ pid: 100, start: 5 });
    expect(runc.state('sb-1')).toEqual({ pid: 100, start: 5 });
    // As runc saves: a temp file renamed over the old one (a new inode).
    writeFileSync(`${file}.tmp`, stateOf(200, 7));
    renameSync(`${file}.tmp`, file);
    expect(runc.state('sb-1')).toEqual({ pid: 200, start: 7 });
    rmSync(file);
    expect(runc.state('sb-1')).toBeNull();
    // The same id made again.
    writeFileSync(file, stateOf(300, 9));
    expect(runc.state('sb-1')).toEqual({ pid: 300, start: 9 });
  });

  it('parses the file again only when its inode, mtime or size changed', () => {
    root = mkdtempSync(join(tmpdir(), 'runc-state-'));
    mkdirSync(join(root, 'sb-2'));
    const file = join(root, 'sb-2', 'state.json');
    writeFileSync(file, stateOf(100, 5));
    utimesSync(file, 1000, 1000);
    const runc = new Runc(noRunner, root);
    expect(runc.state('sb-2')?.pid).toBe(100);
    // Same inode, same size, mtime put back: the kept parse answers (runc never writes in place).
    writeFileSync(file, stateOf(900, 5));
    utimesSync(file, 1000, 1000);
    expect(statSync(file).mtimeMs).toBe(1_000_000);
    expect(runc.state('sb-2')?.pid).toBe(100);
    // Any change of mtime: read again.
    utimesSync(file, 1000, 1001);
    expect(runc.state('sb-2')?.pid).toBe(900);
  });
});
