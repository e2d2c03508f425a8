import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon();
});
afterAll(() => t.stop());

describe('PUT/GET/DELETE /filesystem/{path} (reference §1.2)', () => {
  it('writes a file with parents (0755) and default 0644, then reads it as JSON', async () => {
    const put = await call(t.base, 'PUT', '/filesystem/dir/sub/a.txt', { content: 'héllo' });
    expect(put).toMatchObject({
      status: 200,
      body: { message: expect.any(String), path: join(t.wd, 'dir/sub/a.txt') },
    });
    expect((statSync(join(t.wd, 'dir/sub')).mode & 0o777).toString(8)).toBe('755');
    const get = await call(t.base, 'GET', '/filesystem/dir/sub/a.txt');
    expect(get.status).toBe(200);
    expect(get.body).toMatchObject({
      path: join(t.wd, 'dir/sub/a.txt'),
      name: 'a.txt',
      permissions: '644',
      size: Buffer.byteLength('héllo'),
      content: 'héllo',
    });
    expect(typeof get.body.owner).toBe('string');
    expect(typeof get.body.group).toBe('string');
    expect(new Date(get.body.lastModified).toISOString()).toBe(get.body.lastModified);
  });

  it('applies permissions, and 400s on bad permissions or a bad body', async () => {
    expect(
      (await call(t.base, 'PUT', '/filesystem/x.sh', { content: 'echo', permissions: '0755' })).status,
    ).toBe(200);
    expect((statSync(join(t.wd, 'x.sh')).mode & 0o777).toString(8)).toBe('755');
    const bad = await call(t.base, 'PUT', '/filesystem/y', { content: 'a', permissions: '999' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.any(String) });
    const notJson = await call(t.base, 'PUT', '/filesystem/y', '{nope');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatch(/^invalid request body/);
  });

  it('creates directories with isDirectory and lists them', async () => {
    expect((await call(t.base, 'PUT', '/filesystem/made', { isDirectory: true })).status).toBe(200);
    writeFileSync(join(t.wd, 'made/f1'), '1');
    mkdirSync(join(t.wd, 'made/inner'));
    const ls = await call(t.base, 'GET', '/filesystem/made');
    expect(ls.body).toMatchObject({
      name: 'made',
      path: join(t.wd, 'made'),
      files: [{ name: 'f1', size: 1 }],
      subdirectories: [{ name: 'inner', path: join(t.wd, 'made/inner') }],
    });
    const root = await call(t.base, 'GET', '/filesystem/');
    expect(root.body.path).toBe(t.wd);
  });

  it('404s a missing path', async () => {
    const r = await call(t.base, 'GET', '/filesystem/missing.txt');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: expect.stringContaining('missing.txt') });
  });

  it('downloads raw bytes for ?download=true, octet-stream or a non-JSON Accept; 400 on a directory', async () => {
    writeFileSync(join(t.wd, 'data.json'), '{"a":1}');
    for (const [q, accept] of [
      ['?download=true', undefined],
      ['', 'application/octet-stream'],
      ['', 'text/plain'],
    ] as const) {
      const res = await fetch(`${t.base}/filesystem/data.json${q}`, accept ? { headers: { accept } } : {});
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="data.json"');
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.text()).toBe('{"a":1}');
    }
    const json = await fetch(`${t.base}/filesystem/data.json`, { headers: { accept: '*/*' } });
    expect(((await json.json()) as { content: string }).content).toBe('{"a":1}');
    expect((await call(t.base, 'GET', '/filesystem/made?download=true')).status).toBe(400);
  });

  it('honours Range in download mode (206, 416)', async () => {
    writeFileSync(join(t.wd, 'r.bin'), '0123456789');
    const part = await fetch(`${t.base}/filesystem/r.bin?download=true`, { headers: { range: 'bytes=2-5' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
    expect(await part.text()).toBe('2345');
    const tail = await fetch(`${t.base}/filesystem/r.bin?download=true`, { headers: { range: 'bytes=-3' } });
    expect(await tail.text()).toBe('789');
    const bad = await fetch(`${t.base}/filesystem/r.bin?download=true`, { headers: { range: 'bytes=50-' } });
    expect(bad.status).toBe(416);
    expect(await bad.json()).toEqual({ error: expect.any(String) });
  });

  it('streams large files (> 8 MiB) in download mode, with Range', async () => {
    const big = Buffer.alloc(9 * 1024 * 1024, 1);
    big.write('END', big.length - 3);
    writeFileSync(join(t.wd, 'big.bin'), big);
    const all = await fetch(`${t.base}/filesystem/big.bin?download=true`);
    expect(Buffer.from(await all.arrayBuffer()).equals(big)).toBe(true);
    expect(all.headers.get('content-disposition')).toBe('attachment; filename="big.bin"');
    expect(all.headers.get('cache-control')).toBe('no-cache, no-store, must-revalidate');
    expect(all.headers.get('access-control-allow-origin')).toBe('*');
    const tail = await fetch(`${t.base}/filesystem/big.bin?download=true`, {
      headers: { range: 'bytes=-3' },
    });
    expect(tail.status).toBe(206);
    expect(await tail.text()).toBe('END');
  });

  it('uploads multipart/form-data (file + permissions), 400 without a file part', async () => {
    const form = new FormData();
    form.append('permissions', '600');
    form.append('file', new Blob([Buffer.alloc(300_000, 7)]), 'big.bin');
    const res = await fetch(`${t.base}/filesystem/up/big.bin`, { method: 'PUT', body: form });
    expect(res.status).toBe(200);
    const st = statSync(join(t.wd, 'up/big.bin'));
    expect(st.size).toBe(300_000);
    expect((st.mode & 0o777).toString(8)).toBe('600');
    const none = new FormData();
    none.append('permissions', '600');
    const r2 = await fetch(`${t.base}/filesystem/up/none.bin`, { method: 'PUT', body: none });
    expect(r2.status).toBe(400);
    expect(await r2.json()).toEqual({ error: expect.stringMatching(/file/) });
    const badPerm = new FormData();
    badPerm.append('permissions', '99');
    badPerm.append('file', new Blob(['x']), 'x');
    expect((await fetch(`${t.base}/filesystem/up/bad.bin`, { method: 'PUT', body: badPerm })).status).toBe(
      400,
    );
    expect(readdirSync(join(t.wd, 'up'))).toEqual(['big.bin']); // no temp file left behind
  });

  it('deletes files; directories need recursive=true (422 otherwise); 404 when missing', async () => {
    writeFileSync(join(t.wd, 'del.txt'), 'x');
    expect((await call(t.base, 'DELETE', '/filesystem/del.txt')).body).toMatchObject({
      path: join(t.wd, 'del.txt'),
    });
    mkdirSync(join(t.wd, 'deldir/a'), { recursive: true });
    expect((await call(t.base, 'DELETE', '/filesystem/deldir')).status).toBe(422);
    expect((await call(t.base, 'DELETE', '/filesystem/deldir?recursive=true')).status).toBe(200);
    expect((await call(t.base, 'DELETE', '/filesystem/deldir')).status).toBe(404);
  });

  it('treats %2F as absolute, in both spellings, and expands ~', async () => {
    const abs = join(t.root, 'outside.txt');
    writeFileSync(abs, 'abs');
    const enc = encodeURIComponent(abs);
    expect((await call(t.base, 'GET', `/filesystem/${enc}`)).body.content).toBe('abs');
    expect((await call(t.base, 'GET', `/filesystem${enc}`)).body.content).toBe('abs');
    const put = await call(t.base, 'PUT', `/filesystem${encodeURIComponent(join(t.root, 'abs2.txt'))}`, {
      content: 'two',
    });
    expect(put.body).toEqual({ message: 'File created successfully', path: join(t.root, 'abs2.txt') });
    expect(readFileSync(join(t.root, 'abs2.txt'), 'utf8')).toBe('two');
    await call(t.base, 'PUT', '/filesystem/~/notes.txt', { content: 'home' });
    expect(readFileSync(join(t.root, 'home/notes.txt'), 'utf8')).toBe('home');
  });

  it('never serves a dot-dot URL outside the route (URL normalisation), 400s escaping body paths', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${t.base}/filesystem/a/../../../etc/passwd`, { method: 'GET' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.path = '/filesystem/a/../../../etc/passwd';
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404); // normalised to /etc/passwd: no such route
    const r = await call(t.base, 'POST', '/process', { command: 'true', workingDir: '../..' });
    expect(r).toMatchObject({ status: 400, body: { error: expect.stringMatching(/escapes/) } });
  });
});

describe('/filesystem/tree/{path} (spec "Sandbox API")', () => {
  it('PUT writes the files and answers the tree with all four fields', async () => {
    const r = await call(t.base, 'PUT', '/filesystem/tree/proj', {
      files: { 'a.txt': 'A', 'src/b.ts': 'B', 'src/deep/c.md': 'C' },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['files', 'name', 'path', 'subdirectories']);
    expect(r.body.name).toBe('proj');
    expect(r.body.path).toBe(join(t.wd, 'proj'));
    expect(r.body.files.map((f: { path: string }) => f.path.slice(t.wd.length + 1))).toEqual([
      'proj/a.txt',
      'proj/src/b.ts',
      'proj/src/deep/c.md',
    ]);
    expect(r.body.subdirectories.map((d: { name: string }) => d.name)).toEqual(['src', 'deep']);
    for (const f of r.body.files) {
      expect(Object.keys(f).sort()).toEqual([
        'group',
        'lastModified',
        'name',
        'owner',
        'path',
        'permissions',
        'size',
      ]);
    }
  });

  it('GET returns the same tree; an empty dir has empty arrays; 400 on a file; 404 when missing', async () => {
    const r = await call(t.base, 'GET', '/filesystem/tree/proj');
    expect(r.body.files).toHaveLength(3);
    mkdirSync(join(t.wd, 'empty'));
    expect((await call(t.base, 'GET', '/filesystem/tree/empty')).body).toEqual({
      name: 'empty',
      path: join(t.wd, 'empty'),
      files: [],
      subdirectories: [],
    });
    expect((await call(t.base, 'GET', '/filesystem/tree/proj/a.txt')).status).toBe(400);
    expect((await call(t.base, 'GET', '/filesystem/tree/nope')).status).toBe(404);
  });

  it('does not follow symlinked directories', async () => {
    mkdirSync(join(t.wd, 'loop'));
    symlinkSync(join(t.wd, 'loop'), join(t.wd, 'loop/self'));
    const r = await call(t.base, 'GET', '/filesystem/tree/loop');
    expect(r.status).toBe(200);
    expect(r.body.subdirectories).toEqual([{ name: 'self', path: join(t.wd, 'loop/self') }]);
  });

  it('PUT 400s on a bad body or an escaping file path', async () => {
    expect((await call(t.base, 'PUT', '/filesystem/tree/p2', { files: 'x' })).status).toBe(400);
    expect((await call(t.base, 'PUT', '/filesystem/tree/p2', { files: { '../../x': 'x' } })).status).toBe(
      400,
    );
  });

  it('DELETE removes the directory with recursive=true, 422 without', async () => {
    expect((await call(t.base, 'DELETE', '/filesystem/tree/proj')).status).toBe(422);
    expect((await call(t.base, 'DELETE', '/filesystem/tree/proj?recursive=true')).status).toBe(200);
    expect((await call(t.base, 'GET', '/filesystem/tree/proj')).status).toBe(404);
  });
});
