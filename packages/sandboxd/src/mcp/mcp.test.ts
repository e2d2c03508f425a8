/* eslint-disable @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { register } from 'node:module';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';

// Vitest runs its workers with `--conditions source` (the repo resolves workspace packages to
// their sources); under it eventsource-parser, a dependency of the SDK client, resolves to .ts
// files. A resolve hook drops that condition for third-party packages before the SDK loads.
register(
  'data:text/javascript,' +
    encodeURIComponent(
      `export async function resolve(s, c, next) {
        const r = await next(s, c);
        return r.url.includes('/node_modules/') && r.url.endsWith('.ts')
          ? next(s, { ...c, conditions: c.conditions.filter((x) => x !== 'source') })
          : r;
      }`,
    ),
);
const { Client: SdkClient } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');

/** A POST to /mcp with headers fetch will not set (Host). */
function rawPost(
  base: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const u = new URL(`${base}/mcp`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(JSON.stringify(body));
  });
}

let t: TestDaemon;
let client: Client;
beforeAll(async () => {
  t = await startDaemon({}, { mcpWaitCapSec: 1 });
  client = new SdkClient({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`)));
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

async function tool(
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; value: any }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
  };
  const text = r.content[0]?.text ?? '';
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    /* plain text */
  }
  return { isError: r.isError === true, value };
}

describe('MCP at /mcp (reference §1.9)', () => {
  it('identifies as the Sandbox API Server and lists the tools by their reference names', async () => {
    expect(client.getServerVersion()?.name).toBe('Sandbox API Server');
    const names = (await client.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual(
      [
        'processesList',
        'processExecute',
        'processGet',
        'processGetLogs',
        'processStop',
        'processKill',
        'fsGetWorkingDirectory',
        'fsListDirectory',
        'fsReadFile',
        'fsWriteFile',
        'fsEditFile',
        'fsDeleteFileOrDirectory',
        'codegenFileSearch',
        'codegenGrepSearch',
        'codegenListDir',
        'codegenReadFileRange',
      ].sort(),
    );
  });

  it('filesystem tools: working dir, write, read, list, edit, delete', async () => {
    expect((await tool('fsGetWorkingDirectory')).value).toEqual({ workingDirectory: t.wd });
    expect((await tool('fsWriteFile', { path: 'notes/a.txt', content: 'one two two' })).value.path).toBe(
      join(t.wd, 'notes/a.txt'),
    );
    expect((await tool('fsReadFile', { path: 'notes/a.txt' })).value).toMatchObject({
      content: 'one two two',
      name: 'a.txt',
    });
    expect((await tool('fsListDirectory', { path: 'notes' })).value.files.map((f: any) => f.name)).toEqual([
      'a.txt',
    ]);
    const ambiguous = await tool('fsEditFile', { path: 'notes/a.txt', oldString: 'two', newString: '2' });
    expect(ambiguous.isError).toBe(true);
    expect(
      (await tool('fsEditFile', { path: 'notes/a.txt', oldString: 'one', newString: '1' })).value,
    ).toEqual({
      path: join(t.wd, 'notes/a.txt'),
      occurrencesReplaced: 1,
    });
    expect(
      (await tool('fsEditFile', { path: 'notes/a.txt', oldString: 'two', newString: '2', replaceAll: true }))
        .value.occurrencesReplaced,
    ).toBe(2);
    expect(readFileSync(join(t.wd, 'notes/a.txt'), 'utf8')).toBe('1 2 2');
    expect((await tool('fsEditFile', { path: 'notes/a.txt', oldString: 'zzz', newString: '' })).isError).toBe(
      true,
    );
    expect((await tool('fsDeleteFileOrDirectory', { path: 'notes' })).isError).toBe(true); // not empty
    expect(
      (await tool('fsDeleteFileOrDirectory', { path: 'notes', isDirectory: true, recursive: true })).isError,
    ).toBe(false);
    expect((await tool('fsReadFile', { path: 'notes/a.txt' })).isError).toBe(true);
  });

  it('process tools: execute (default working dir "/"), get, logs, list, stop, kill', async () => {
    const r = await tool('processExecute', {
      command: 'pwd; echo err >&2',
      name: 'm1',
      waitForCompletion: true,
    });
    expect(r.value).toMatchObject({ status: 'completed', stdout: '/\n', name: 'm1' });
    expect((await tool('processGet', { identifier: 'm1' })).value.pid).toBe(r.value.pid);
    expect((await tool('processGetLogs', { identifier: 'm1' })).value).toEqual({
      stdout: '/\n',
      stderr: 'err\n',
      logs: '/\nerr\n',
    });
    expect((await tool('processesList')).value.map((p: any) => p.name)).toContain('m1');
    await tool('processExecute', { command: 'sleep 30', name: 'm2' });
    expect((await tool('processStop', { identifier: 'm2' })).value).toEqual({
      message: 'Process stopped successfully',
    });
    await tool('processExecute', { command: 'sleep 30', name: 'm3' });
    expect((await tool('processKill', { identifier: 'm3' })).value).toEqual({
      message: 'Process killed successfully',
    });
    expect((await tool('processGet', { identifier: 'nobody' })).isError).toBe(true);
  });

  it('answers pollRequired when the wait exceeds the cap, and the process keeps running', async () => {
    const r = await tool('processExecute', {
      command: 'sleep 5',
      name: 'long',
      waitForCompletion: true,
      workingDir: t.wd,
    });
    expect(r.value).toMatchObject({
      name: 'long',
      status: 'running',
      pollRequired: true,
      message: expect.any(String),
    });
    await tool('processKill', { identifier: 'long' });
  });

  it('search tools: fuzzy file search, grep, list dir, read file range', async () => {
    writeFileSync(join(t.wd, 'alpha.ts'), 'line1\nneedle here\nline3\n');
    expect((await tool('codegenFileSearch', { query: 'alp' })).value.matches[0].path).toBe(
      join(t.wd, 'alpha.ts'),
    );
    expect((await tool('codegenGrepSearch', { query: 'NEEDLE' })).value.matches).toEqual([
      { path: join(t.wd, 'alpha.ts'), line: 2, column: 1, text: 'needle here' },
    ]);
    expect((await tool('codegenListDir', {})).value.files.map((f: any) => f.name)).toContain('alpha.ts');
    expect(
      (await tool('codegenReadFileRange', { path: 'alpha.ts', startLine: 2, endLine: 3 })).value,
    ).toMatchObject({
      content: 'needle here\nline3',
      startLine: 2,
      endLine: 3,
    });
  });

  it('GET, DELETE, PUT and PATCH /mcp are 405 with {error} and Allow (issue 14 item 7)', async () => {
    const r = await call(t.base, 'GET', '/mcp');
    expect(r).toMatchObject({ status: 405, body: { error: expect.any(String) } });
    expect(r.headers.get('allow')).toBe('POST, OPTIONS');
    for (const m of ['DELETE', 'PUT', 'PATCH']) {
      const x = await call(t.base, m, '/mcp');
      expect([m, x.status, x.headers.get('allow')]).toEqual([m, 405, 'POST, OPTIONS']);
    }
  });

  it('refuses a DNS-rebinding request: foreign Host or Origin is 403 before any tool runs', async () => {
    const marker = join(t.wd, 'rebound.txt');
    const write = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'fsWriteFile', arguments: { path: marker, content: 'pwned' } },
    };
    const evilHost = await rawPost(t.base, write, { host: 'evil.example' });
    expect(evilHost.status).toBe(403);
    expect(evilHost.body).toContain('Invalid Host header: evil.example');
    const evilOrigin = await rawPost(t.base, write, { origin: 'http://evil.example' });
    expect(evilOrigin.status).toBe(403);
    expect(evilOrigin.body).toContain('Invalid Origin header: http://evil.example');
    expect(() => readFileSync(marker)).toThrow();
    // Loopback names with any port, and no Origin at all, pass.
    const ok = await rawPost(
      t.base,
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      {
        host: 'localhost:9',
        origin: 'http://127.0.0.1:1234',
      },
    );
    expect(ok.status).toBe(200);
  });

  it('allows the hostnames it was configured with (the sandbox and platform hosts)', async () => {
    const d = await startDaemon({ mcpAllowedHosts: ['sbx-a-ws.local.example.test'] });
    try {
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const own = await rawPost(d.base, ping, {
        host: 'SBX-A-WS.local.example.test:443',
        origin: 'https://sbx-a-ws.local.example.test',
      });
      expect(own.status).toBe(200);
      const sibling = await rawPost(d.base, ping, { host: 'sbx-b-ws.local.example.test' });
      expect(sibling.status).toBe(403);
    } finally {
      await d.stop();
    }
  });
});
