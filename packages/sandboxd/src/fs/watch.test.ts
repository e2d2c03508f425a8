import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, readLines, startDaemon, type TestDaemon } from '../test-support/harness.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon({ keepaliveMs: { logs: 100, watch: 100, exec: 100 } });
  mkdirSync(join(t.wd, 'w/sub'), { recursive: true });
});
afterAll(() => t.stop());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('GET /watch/filesystem/{path} (reference §1.2 "Watch stream")', () => {
  it('streams CREATE/WRITE/REMOVE lines with the parent dir as path, and keepalive lines', async () => {
    const res = await fetch(`${t.base}/watch/filesystem/w`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const done = readLines(res, (l) => l.some((x) => x.includes('"REMOVE"')) && l.includes('[keepalive]'));
    await sleep(100);
    writeFileSync(join(t.wd, 'w/a.txt'), '1');
    await sleep(50);
    rmSync(join(t.wd, 'w/a.txt'));
    const lines = await done;
    const events = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(events).toContainEqual({ op: 'CREATE', name: 'a.txt', path: join(t.wd, 'w'), error: null });
    expect(events).toContainEqual({ op: 'REMOVE', name: 'a.txt', path: join(t.wd, 'w'), error: null });
    expect(lines).toContain('[keepalive]');
  });

  it('is not recursive by default, recursive with /**, and applies ignore substrings', async () => {
    const flat = await fetch(`${t.base}/watch/filesystem/w`);
    const deep = await fetch(`${t.base}/watch/filesystem/w/**?ignore=skip`);
    const flatLines = readLines(flat, () => false, 1200);
    const deepLines = readLines(deep, (l) => l.some((x) => x.includes('b.txt')), 5000);
    await sleep(150);
    writeFileSync(join(t.wd, 'w/sub/skip.txt'), '1');
    writeFileSync(join(t.wd, 'w/sub/b.txt'), '1');
    const d = (await deepLines).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(d.some((e) => e.name === 'b.txt' && e.path === join(t.wd, 'w/sub'))).toBe(true);
    expect(d.some((e) => e.name === 'skip.txt')).toBe(false);
    const f = (await flatLines).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(f.some((e) => e.name === 'b.txt')).toBe(false);
  });

  it('watches new subdirectories recursively', async () => {
    const res = await fetch(`${t.base}/watch/filesystem/w/**`);
    const lines = readLines(res, (l) => l.some((x) => x.includes('"deep.txt"')), 5000);
    await sleep(150);
    mkdirSync(join(t.wd, 'w/new'));
    await sleep(150);
    writeFileSync(join(t.wd, 'w/new/deep.txt'), 'x');
    expect((await lines).some((l) => l.includes('"deep.txt"'))).toBe(true);
  });

  it('400s a file, 404s a missing path', async () => {
    writeFileSync(join(t.wd, 'file.txt'), '');
    expect((await call(t.base, 'GET', '/watch/filesystem/file.txt')).status).toBe(400);
    expect((await call(t.base, 'GET', '/watch/filesystem/missing')).status).toBe(404);
  });
});
