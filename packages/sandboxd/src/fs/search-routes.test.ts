import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';

let t: TestDaemon;
const files: Record<string, string> = {
  'src/main.ts': 'export const main = 1;\nconsole.log("Hello World");\n',
  'src/utils/strings.ts': 'export function hello() {\n  return "hello";\n}\n',
  'src/utils/output.go': 'package main\n',
  'docs/readme.md': '# Hello\n',
  'node_modules/dep/index.js': 'hello from dep\n',
  '.hidden/secret.ts': 'hello hidden\n',
  'bin.dat': 'hello\0binary\n',
};
beforeAll(async () => {
  t = await startDaemon();
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(t.wd, p)), { recursive: true });
    writeFileSync(join(t.wd, p), c);
  }
});
afterAll(() => t.stop());

const rel = (r: { body: { matches: { path: string }[] } }): string[] =>
  r.body.matches.map((m) => m.path.slice(t.wd.length + 1));

describe('GET /filesystem-find/{path}', () => {
  it('finds files by pattern, skipping default excludeDirs and hidden entries', async () => {
    const r = await call(t.base, 'GET', '/filesystem-find/?patterns=*.ts');
    expect(r.status).toBe(200);
    expect(rel(r).sort()).toEqual(['src/main.ts', 'src/utils/strings.ts']);
    expect(r.body.total).toBe(2);
    expect(r.body.matches[0].type).toBe('file');
  });

  it('finds directories, honours excludeDirs="" and excludeHidden=false, maxResults', async () => {
    expect(rel(await call(t.base, 'GET', '/filesystem-find/src?type=directory'))).toEqual(['src/utils']);
    const all = await call(
      t.base,
      'GET',
      '/filesystem-find/?patterns=*.js,*.ts&excludeDirs=&excludeHidden=false&maxResults=0',
    );
    expect(rel(all).sort()).toEqual([
      '.hidden/secret.ts',
      'node_modules/dep/index.js',
      'src/main.ts',
      'src/utils/strings.ts',
    ]);
    expect((await call(t.base, 'GET', '/filesystem-find/?maxResults=1')).body.total).toBe(1);
  });

  it('400s a bad type or a non-directory', async () => {
    expect((await call(t.base, 'GET', '/filesystem-find/?type=link')).status).toBe(400);
    expect((await call(t.base, 'GET', '/filesystem-find/src/main.ts')).status).toBe(400);
  });
});

describe('GET /filesystem-search/{path} (fuzzy)', () => {
  it('ranks by fuzzy score against `query`', async () => {
    const r = await call(t.base, 'GET', '/filesystem-search/src?query=strts');
    expect(r.status).toBe(200);
    expect(rel(r)[0]).toBe('src/utils/strings.ts');
    expect(r.body.matches[0]).toEqual({ path: expect.any(String), score: expect.any(Number), type: 'file' });
    for (let i = 1; i < r.body.matches.length; i++) {
      expect(r.body.matches[i - 1].score).toBeGreaterThanOrEqual(r.body.matches[i].score);
    }
  });

  it('without query, the last path segment is the pattern and its parent the root', async () => {
    const r = await call(t.base, 'GET', '/filesystem-search/src/strts');
    expect(r.status).toBe(200);
    expect(rel(r)[0]).toBe('src/utils/strings.ts');
  });

  it('400s an empty root without a query', async () => {
    expect((await call(t.base, 'GET', '/filesystem-search/')).status).toBe(400);
    expect((await call(t.base, 'GET', '/filesystem-search/?query=main')).status).toBe(200);
  });
});

describe('GET /filesystem-content-search/{path}', () => {
  it('finds substrings case-insensitively with 1-based line and column; skips binaries and excluded dirs', async () => {
    const r = await call(t.base, 'GET', '/filesystem-content-search/?query=hello');
    expect(r.status).toBe(200);
    expect(r.body.query).toBe('hello');
    expect(r.body.matches).toContainEqual({
      path: join(t.wd, 'src/main.ts'),
      line: 2,
      column: 14,
      text: 'console.log("Hello World");',
    });
    expect(rel(r)).not.toContain('bin.dat');
    expect(rel(r)).not.toContain('node_modules/dep/index.js');
    expect(r.body.total).toBe(r.body.matches.length);
  });

  it('caseSensitive, filePattern, maxResults', async () => {
    expect(
      rel(await call(t.base, 'GET', '/filesystem-content-search/?query=Hello&caseSensitive=true')).sort(),
    ).toEqual(['docs/readme.md', 'src/main.ts']);
    expect(
      rel(await call(t.base, 'GET', '/filesystem-content-search/?query=hello&filePattern=*.md')),
    ).toEqual(['docs/readme.md']);
    expect(
      (await call(t.base, 'GET', '/filesystem-content-search/?query=hello&maxResults=1')).body.total,
    ).toBe(1);
  });

  it('400s without query or on a missing directory', async () => {
    expect((await call(t.base, 'GET', '/filesystem-content-search/')).status).toBe(400);
    expect((await call(t.base, 'GET', '/filesystem-content-search/missing?query=x')).status).toBe(400);
  });
});
