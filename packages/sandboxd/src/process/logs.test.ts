import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessLogs } from './logs.js';
import { LinePrefixer } from './line-prefixer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('ProcessLogs (reference §1.3 "Log files")', () => {
  it('writes per-stream and combined files and stops each at its cap with one marker', () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-'));
    dirs.push(dir);
    const logs = new ProcessLogs(dir, 'p-1', 10);
    logs.write('stdout', 'abcdef');
    logs.write('stderr', 'XY');
    logs.write('stdout', 'ghijkl');
    logs.write('stdout', 'more');
    expect(logs.read('stdout')).toBe('abcdefghij\n[log truncated: 10 bytes reached]\n');
    expect(logs.read('stderr')).toBe('XY');
    expect(readFileSync(join(dir, 'p-1.log'), 'utf8').startsWith('abcdefXYgh')).toBe(true);
    expect(logs.tail('stderr', 1)).toBe('Y');
    logs.close();
    expect(logs.read('stdout')).toContain('abcdef');
  });
});

describe('LinePrefixer', () => {
  it('prefixes whole lines and carries partial ones across chunks', () => {
    const out: string[] = [];
    const p = new LinePrefixer((t) => out.push(t));
    p.push('stdout', 'a\nb');
    p.push('stderr', 'x\n');
    p.push('stdout', 'c\n');
    p.push('stdout', 'tail');
    p.flush();
    expect(out.join('')).toBe('stdout:a\nstderr:x\nstdout:bc\nstdout:tail\n');
  });
});
