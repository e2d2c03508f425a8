// The sandbox clients against a small fake sandbox API (unit layer only: the real daemon and
// platform are exercised in tests/e2e/sdk). The fake listens on 127.0.0.1 but is addressed by a
// host-style `*.localhost` URL, so every request also proves our loopback resolution.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { Sandbox } from '../sandbox/sandbox.js';
import type { SandboxResource } from '../sandbox/types.js';
import { Tarmac } from '../tarmac.js';
import { localhostFetch } from './localhost.js';
import { nodeWebSocketFactory } from './websocket.js';

interface Hit {
  method: string;
  url: string;
  host: string;
  auth: string;
  contentType: string;
  body: Buffer;
}
const hits: Hit[] = [];
let server: Server;
let port = 0;

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
  const url = req.url ?? '/';
  const send = (status: number, payload: unknown, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type });
    res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
  };
  if (url === '/filesystem/%2Fapp%2Fhello.txt' && req.method === 'GET') {
    if (req.headers.accept === 'application/octet-stream')
      return send(200, 'raw-bytes', 'application/octet-stream');
    return send(200, { path: '/app/hello.txt', name: 'hello.txt', content: 'hi there' });
  }
  if (url === '/filesystem/%2Fmissing' && req.method === 'GET') return send(404, { error: 'file not found' });
  if (url.startsWith('/filesystem/') && req.method === 'PUT') return send(200, { message: 'ok', path: url });
  if (url.startsWith('/filesystem-multipart/initiate/'))
    return send(200, { uploadId: 'u1', path: '/app/big' });
  if (url.startsWith('/filesystem-multipart/u1/part?partNumber=')) {
    const n = Number(new URL(url, 'http://x').searchParams.get('partNumber'));
    return send(200, { partNumber: n, etag: `etag${n}`, size: body.length });
  }
  if (url === '/filesystem-multipart/u1/complete') return send(200, { message: 'done' });
  if (url === '/process' && req.method === 'POST') {
    const request = JSON.parse(body.toString()) as { command: string };
    if (req.headers.accept === 'text/event-stream') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const final = { name: 'p1', status: 'completed', exitCode: 3, command: request.command };
      res.write(`${JSON.stringify({ type: 'stdout', data: 'out1\n' })}\n`);
      res.write(`${JSON.stringify({ type: 'keepalive', data: '' })}\n`);
      res.write(`${JSON.stringify({ type: 'stderr', data: 'err1\n' })}\n`);
      res.end(`${JSON.stringify({ type: 'result', data: JSON.stringify(final) })}\n`);
      return;
    }
    return send(200, { name: 'p2', status: 'running', exitCode: 0 });
  }
  if (url === '/process/p2/logs/stream') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('stdout:a\n[keepalive]\nstderr:b\nstdout:c\n');
    return;
  }
  if (url === '/port/3000/api?x=1') return send(200, { proxied: true });
  send(404, { error: `fake: no route ${req.method} ${url}` });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void readAll(req).then((body) => {
      hits.push({
        method: req.method ?? '',
        url: req.url ?? '',
        host: req.headers.host ?? '',
        auth: req.headers.authorization ?? '',
        contentType: req.headers['content-type'] ?? '',
        body,
      });
      handle(req, res, body);
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    socket.send(
      JSON.stringify({
        type: 'output',
        data: `hello ${q.get('cols')}x${q.get('rows')} ${req.headers.authorization}`,
      }),
    );
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as { type: string; data?: string; cols?: number };
      if (message.type === 'input')
        socket.send(JSON.stringify({ type: 'output', data: `echo:${message.data}` }));
      if (message.type === 'resize') socket.close(1000, `resized ${message.cols}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function sandbox(): Sandbox {
  const tarmac = new Tarmac({
    apiUrl: 'http://127.0.0.1:1',
    apiKey: 'ak_test',
    workspace: 'default',
    fetch: localhostFetch(),
    webSocket: nodeWebSocketFactory,
  });
  const resource = {
    metadata: { name: 'web', workspace: 'default', url: `http://sbx-web-default.local.localhost:${port}` },
    spec: {},
    status: 'DEPLOYED',
    events: [],
  } as unknown as SandboxResource;
  return new Sandbox(resource, tarmac);
}

describe('sandbox clients over a host-style *.localhost URL', () => {
  it('reads files as JSON and as bytes, keeping Host and auth, with absolute paths %2F-encoded', async () => {
    const sb = sandbox();
    expect(await sb.fs.read('/app/hello.txt')).toBe('hi there');
    expect(new TextDecoder().decode(await sb.fs.readBinary('/app/hello.txt'))).toBe('raw-bytes');
    const hit = hits.find((h) => h.url === '/filesystem/%2Fapp%2Fhello.txt');
    expect(hit?.host).toBe(`sbx-web-default.local.localhost:${port}`);
    expect(hit?.auth).toBe('Bearer ak_test');
    await expect(sb.fs.read('/missing')).rejects.toMatchObject({ status: 404, message: 'file not found' });
  });

  it('writes small files as JSON, relative paths keeping their slashes', async () => {
    await sandbox().fs.write('src/a b.txt', 'x');
    const hit = hits.at(-1);
    expect([hit?.method, hit?.url, hit?.body.toString()]).toEqual([
      'PUT',
      '/filesystem/src/a%20b.txt',
      '{"content":"x"}',
    ]);
  });

  it('uploads above the threshold in ordered parts and completes with their etags', async () => {
    const sb = sandbox();
    sb.fs.multipartThreshold = 10;
    const before = hits.length;
    const data = new Uint8Array(25).fill(7);
    await sb.fs.upload('/app/big', data, { partSize: 10 });
    const mine = hits.slice(before);
    expect(mine.filter((h) => h.url.includes('/part?')).map((h) => h.contentType.split(';')[0])).toEqual([
      'multipart/form-data',
      'multipart/form-data',
      'multipart/form-data',
    ]);
    const complete = mine.find((h) => h.url.endsWith('/complete'));
    expect(JSON.parse(complete?.body.toString() ?? '')).toEqual({
      parts: [1, 2, 3].map((n) => ({ partNumber: n, etag: `etag${n}` })),
    });
  });

  it('streams exec output live and returns the final state with the exit code', async () => {
    const chunks: string[] = [];
    const result = await sandbox().process.exec({
      command: 'false',
      waitForCompletion: true,
      onLog: (chunk, stream) => chunks.push(`${stream}:${chunk}`),
    });
    expect(chunks).toEqual(['stdout:out1\n', 'stderr:err1\n']);
    expect([result.status, result.exitCode]).toEqual(['completed', 3]);
  });

  it('follows a log stream, splitting streams and skipping keepalives', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const stream = sandbox().process.streamLogs('p2', {
      onStdout: (c) => out.push(c),
      onStderr: (c) => err.push(c),
    });
    await stream.done;
    expect([out.join(''), err.join('')]).toEqual(['a\nc\n', 'b\n']);
  });

  it('fetches a sandbox port through /port/{n}', async () => {
    const response = await sandbox().fetch(3000, '/api?x=1');
    expect(await response.json()).toEqual({ proxied: true });
  });

  it('opens a terminal with size and auth, sends input and resize frames', async () => {
    const terminal = await sandbox().terminal.connect({ cols: 100, rows: 30 });
    const output: string[] = [];
    terminal.onData((d) => output.push(d));
    const closed = new Promise<string>((resolve) => terminal.onClose((e) => resolve(e.reason)));
    await expect.poll(() => output[0]).toBe('hello 100x30 Bearer ak_test');
    terminal.write('ls\r');
    await expect.poll(() => output[1]).toBe('echo:ls\r');
    terminal.resize(120, 40);
    expect(await closed).toBe('resized 120');
  });
});
