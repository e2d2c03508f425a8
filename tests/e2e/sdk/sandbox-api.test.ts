// Every sandbox data-plane method of the SDK against the real sandbox daemon (built sandboxd, run
// as a local process; the SDK is pointed at it with a forced sandbox URL, as TARMAC_SANDBOX_<NAME>_URL
// does). Management-plane sandbox methods run against the real platform in platform.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError, Sandbox, Tarmac, UnprocessableError, type SandboxResource } from '@tarmac/sdk';
import { localhostFetch, nodeWebSocketFactory } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxd, type LocalSandboxd } from './sandboxd.js';

let daemon: LocalSandboxd;
let sandbox: Sandbox;

beforeAll(async () => {
  daemon = await startSandboxd();
  const client = new Tarmac({
    apiUrl: 'http://127.0.0.1:9',
    apiKey: 'unused-by-a-bare-daemon',
    fetch: localhostFetch(),
    webSocket: nodeWebSocketFactory,
    sandboxUrl: (name) => (name === 'box' ? daemon.url : undefined),
  });
  const record = {
    metadata: { name: 'box', workspace: 'default', url: '' },
    spec: {},
    status: 'DEPLOYED',
    events: [],
  };
  sandbox = new Sandbox(record as unknown as SandboxResource, client);
});
afterAll(() => daemon?.stop());

describe('sandbox.fs against sandboxd', () => {
  it('writes, reads, lists and removes text and binary files at absolute and relative paths', async () => {
    const abs = join(daemon.root, 'abs.txt');
    await sandbox.fs.write(abs, 'absolute');
    expect(readFileSync(abs, 'utf8')).toBe('absolute');
    expect(await sandbox.fs.read(abs)).toBe('absolute');

    await sandbox.fs.write('nested/dir/rel.txt', 'relative');
    expect(readFileSync(join(daemon.root, 'nested/dir/rel.txt'), 'utf8')).toBe('relative');

    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    await sandbox.fs.writeBinary('bin.dat', bytes);
    expect([...(await sandbox.fs.readBinary('bin.dat'))]).toEqual([...bytes]);

    const listing = await sandbox.fs.ls('nested/dir');
    expect(listing.files.map((f) => f.name)).toEqual(['rel.txt']);

    await sandbox.fs.rm('bin.dat');
    expect(existsSync(join(daemon.root, 'bin.dat'))).toBe(false);
    await expect(sandbox.fs.read('bin.dat')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('makes directories, writes and reads trees, removes recursively', async () => {
    await sandbox.fs.mkdir('made');
    expect(existsSync(join(daemon.root, 'made'))).toBe(true);
    const tree = await sandbox.fs.writeTree('proj', { 'a.txt': 'A', 'src/b.ts': 'B' });
    expect(tree.subdirectories.map((d) => d.name)).toContain('src');
    const read = await sandbox.fs.tree('proj');
    expect(read.files.map((f) => f.name)).toContain('a.txt');
    await expect(sandbox.fs.rm('proj')).rejects.toBeInstanceOf(UnprocessableError);
    await sandbox.fs.rm('proj', { recursive: true });
    expect(existsSync(join(daemon.root, 'proj'))).toBe(false);
  });

  it('finds files, searches names and greps contents', async () => {
    await sandbox.fs.writeTree('search', {
      'one.go': 'package main // needle',
      'two.ts': 'const x = 1',
      'sub/three.go': 'NEEDLE',
    });
    const found = await sandbox.fs.find('search', { patterns: ['*.go'] });
    expect(found.matches.map((m) => m.path).sort()).toEqual([
      expect.stringMatching(/one\.go$/),
      expect.stringMatching(/three\.go$/),
    ]);
    const grep = await sandbox.fs.grep('needle', 'search');
    expect(grep.matches.map((m) => m.path).sort()).toEqual([
      expect.stringMatching(/one\.go$/),
      expect.stringMatching(/three\.go$/),
    ]);
    const exact = await sandbox.fs.grep('needle', 'search', { caseSensitive: true });
    expect(exact.total).toBe(1);
    const fuzzy = await sandbox.fs.search('search', { patterns: ['*.ts'] });
    expect(fuzzy.matches.length).toBeGreaterThanOrEqual(0);
  });

  it('uploads with the multipart protocol above the threshold and downloads the same bytes', async () => {
    sandbox.fs.multipartThreshold = 64 * 1024;
    const data = new Uint8Array(300 * 1024).map((_, i) => (i * 7) % 256);
    await sandbox.fs.upload('big.bin', data, { partSize: 100 * 1024 });
    expect(Buffer.compare(readFileSync(join(daemon.root, 'big.bin')), Buffer.from(data))).toBe(0);
    expect(Buffer.compare(Buffer.from(await sandbox.fs.download('big.bin')), Buffer.from(data))).toBe(0);
  });

  it('watches a directory and reports a write made after the watch is ready', async () => {
    await sandbox.fs.mkdir('watched');
    const events: string[] = [];
    const watch = sandbox.fs.watch('watched', (e) => events.push(`${e.op} ${e.name}`));
    await watch.ready;
    await new Promise((r) => setTimeout(r, 200));
    await sandbox.fs.write('watched/new.txt', 'x');
    await expect.poll(() => events.some((e) => e.includes('new.txt')), { timeout: 5000 }).toBe(true);
    watch.close();
    await watch.done;
  });
});

describe('sandbox.process against sandboxd', () => {
  it('exec streams stdout and stderr live and returns the exit code', async () => {
    const chunks: string[] = [];
    const result = await sandbox.process.exec({
      command: 'echo out; echo err >&2; exit 4',
      waitForCompletion: true,
      onLog: (chunk, stream) => chunks.push(`${stream}:${chunk}`),
    });
    expect(chunks).toEqual(['stdout:out\n', 'stderr:err\n']);
    expect([result.status, result.exitCode]).toEqual(['failed', 4]);
  });

  it('starts in the background, waits, reads logs, lists and gets processes', async () => {
    const started = await sandbox.process.exec({ command: 'sleep 0.3; echo done', name: 'bg' });
    expect(started.status).toBe('running');
    const finished = await sandbox.process.wait('bg', { maxWaitMs: 10_000, intervalMs: 100 });
    expect([finished.status, finished.exitCode]).toEqual(['completed', 0]);
    expect(await sandbox.process.logs('bg', 'stdout')).toBe('done\n');
    expect((await sandbox.process.get('bg')).name).toBe('bg');
    expect((await sandbox.process.list()).map((p) => p.name)).toContain('bg');
  });

  it('follows a running process log stream until it exits', async () => {
    await sandbox.process.exec({
      command: 'for i in 1 2 3; do echo line$i; sleep 0.1; done; echo bad >&2',
      name: 'follow',
    });
    const out: string[] = [];
    const err: string[] = [];
    const stream = sandbox.process.streamLogs('follow', {
      onStdout: (c) => out.push(c),
      onStderr: (c) => err.push(c),
    });
    await stream.done;
    expect(out.join('')).toBe('line1\nline2\nline3\n');
    expect(err.join('')).toBe('bad\n');
  });

  it('stops and kills process groups', async () => {
    await sandbox.process.exec({ command: 'sleep 30', name: 'stopme' });
    await sandbox.process.stop('stopme');
    expect((await sandbox.process.wait('stopme', { maxWaitMs: 5000, intervalMs: 100 })).status).toBe(
      'stopped',
    );
    await sandbox.process.exec({ command: 'trap "" TERM; sleep 30', name: 'killme' });
    await sandbox.process.kill('killme');
    expect((await sandbox.process.wait('killme', { maxWaitMs: 5000, intervalMs: 100 })).status).toBe(
      'killed',
    );
    await expect(sandbox.process.stop('no-such-process')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('sandbox.terminal against sandboxd', () => {
  it('runs a typed command in a real PTY and shows its output', async () => {
    const terminal = await sandbox.terminal.connect({
      cols: 100,
      rows: 30,
      sessionId: `t${Date.now()}`,
      shell: '/bin/sh',
    });
    let screen = '';
    terminal.onData((d) => (screen += d));
    terminal.write('echo $((6*7))-$(tput cols 2>/dev/null || stty size)\r');
    await expect.poll(() => screen, { timeout: 10_000 }).toMatch(/42-(100|30 100)/);
    const closed = new Promise((resolve) => terminal.onClose(resolve));
    terminal.write('exit\r');
    await closed;
  });
});
