// Every sandboxd route against a real sandbox through the platform's router, host-style and
// path-style (spec "Sandbox API"; packages/sandboxd/ARCHITECTURE.md "Routes"), plus the MCP
// endpoint with the official MCP SDK client and the terminal over a WebSocket.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { cleanUp, createSandbox, missingCapability, startSandboxPlatform } from '../sandboxes/support.js';
import {
  body,
  call,
  hostFetch,
  openSocket,
  ownNetwork,
  sandboxBase,
  STYLES,
  typeAndRead,
  type Style,
} from './support.js';

const skip = missingCapability();
const NAME = 'api-routes';
let p: RunningPlatform | undefined;

beforeAll(async () => {
  if (skip) return;
  p = await startSandboxPlatform({ env: ownNetwork(1) });
  await createSandbox(p, NAME);
}, 15 * 60_000);
afterAll(() => cleanUp(p, [NAME]), 120_000);

describe.skipIf(skip)(`sandbox API routes through the router${skip ? ` (skipped: ${skip})` : ''}`, () => {
  describe.each(STYLES)('%s-style', (style: Style) => {
    const go = (path: string, init?: RequestInit) => call(p!, NAME, style, path, init);
    const dir = `/tmp/${style}`;
    const enc = (path: string) => encodeURIComponent(path);

    it('system: /health, / and the /terminal page; no credentials is 401', async () => {
      const health = await go('/health');
      expect(health.status).toBe(200);
      expect(await body(health)).toMatchObject({ status: 'ok' });
      expect((await go('/')).status).toBe(200);
      const page = await go('/terminal');
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/terminal/ws');
      const anon = await call(p!, NAME, style, '/health', { headers: { authorization: 'Bearer nope' } });
      expect(anon.status).toBe(401);
    });

    it('filesystem: write, read (JSON, download, Range), list, mkdir, tree, delete', async () => {
      const put = await go(`/filesystem/${enc(`${dir}/a.txt`)}`, {
        method: 'PUT',
        body: JSON.stringify({ content: 'hello world' }),
      });
      expect(put.status, await put.clone().text()).toBe(200);
      const read = await body<{ content: string }>(await go(`/filesystem/${enc(`${dir}/a.txt`)}`));
      expect(read.content).toBe('hello world');
      const dl = await go(`/filesystem/${enc(`${dir}/a.txt`)}?download=true`);
      expect(await dl.text()).toBe('hello world');
      const range = await go(`/filesystem/${enc(`${dir}/a.txt`)}`, {
        headers: { accept: 'application/octet-stream', range: 'bytes=6-10' },
      });
      expect(range.status).toBe(206);
      expect(await range.text()).toBe('world');
      const mk = await go(`/filesystem/${enc(`${dir}/sub`)}`, {
        method: 'PUT',
        body: JSON.stringify({ isDirectory: true }),
      });
      expect(mk.status).toBe(200);
      const list = await body<{ files: { name: string }[]; subdirectories: { name: string }[] }>(
        await go(`/filesystem/${enc(dir)}`),
      );
      expect(list.files.map((f) => f.name)).toContain('a.txt');
      expect(list.subdirectories.map((d) => d.name)).toContain('sub');
      // Multipart PUT (binary upload).
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array([0, 1, 2, 255])]), 'b.bin');
      const up = await go(`/filesystem/${enc(`${dir}/b.bin`)}`, { method: 'PUT', body: form });
      expect(up.status, await up.clone().text()).toBe(200);
      const bin = await go(`/filesystem/${enc(`${dir}/b.bin`)}?download=true`);
      expect([...new Uint8Array(await bin.arrayBuffer())]).toEqual([0, 1, 2, 255]);
      // Trees.
      const tree = await go(`/filesystem/tree/${enc(`${dir}/proj`)}`, {
        method: 'PUT',
        body: JSON.stringify({ files: { 'x.txt': 'X', 'src/y.ts': 'Y' } }),
      });
      expect(tree.status, await tree.clone().text()).toBe(200);
      const got = await body<{ files: { name: string }[] }>(
        await go(`/filesystem/tree/${enc(`${dir}/proj`)}`),
      );
      expect(got.files.map((f) => f.name).sort()).toEqual(['x.txt', 'y.ts']);
      expect(
        (await go(`/filesystem/tree/${enc(`${dir}/proj`)}?recursive=true`, { method: 'DELETE' })).status,
      ).toBe(200);
      expect((await go(`/filesystem/${enc(`${dir}/proj`)}`)).status).toBe(404);
      expect((await go(`/filesystem/${enc(`${dir}/b.bin`)}`, { method: 'DELETE' })).status).toBe(200);
      expect((await go(`/filesystem/${enc(`${dir}/b.bin`)}`)).status).toBe(404);
    });

    it('multipart uploads: initiate, part, parts, list, complete; abort', async () => {
      const init = await body<{ uploadId: string }>(
        await go(`/filesystem-multipart/initiate/${enc(`${dir}/big.txt`)}`, { method: 'POST', body: '{}' }),
      );
      const etags: { partNumber: number; etag: string }[] = [];
      for (const [n, text] of [
        [1, 'first-'],
        [2, 'second'],
      ] as const) {
        const form = new FormData();
        form.append('file', new Blob([text]), 'part');
        const part = await body<{ etag: string }>(
          await go(`/filesystem-multipart/${init.uploadId}/part?partNumber=${n}`, {
            method: 'PUT',
            body: form,
          }),
        );
        etags.push({ partNumber: n, etag: part.etag });
      }
      const parts = await body<{ parts: unknown[] }>(
        await go(`/filesystem-multipart/${init.uploadId}/parts`),
      );
      expect(parts.parts).toHaveLength(2);
      const all = await body<{ uploads: { uploadId: string }[] }>(await go('/filesystem-multipart'));
      expect(all.uploads.map((u) => u.uploadId)).toContain(init.uploadId);
      const done = await go(`/filesystem-multipart/${init.uploadId}/complete`, {
        method: 'POST',
        body: JSON.stringify({ parts: etags }),
      });
      expect(done.status, await done.clone().text()).toBe(200);
      expect(
        (await body<{ content: string }>(await go(`/filesystem/${enc(`${dir}/big.txt`)}`))).content,
      ).toBe('first-second');
      const other = await body<{ uploadId: string }>(
        await go(`/filesystem-multipart/initiate/${enc(`${dir}/gone.txt`)}`, { method: 'POST', body: '{}' }),
      );
      expect((await go(`/filesystem-multipart/${other.uploadId}/abort`, { method: 'DELETE' })).status).toBe(
        200,
      );
      expect((await go(`/filesystem-multipart/${other.uploadId}/parts`)).status).toBe(404);
    });

    it('search: find, fuzzy search and content search', async () => {
      await go(`/filesystem/tree/${enc(`${dir}/s`)}`, {
        method: 'PUT',
        body: JSON.stringify({ files: { 'alpha.md': 'needle here', 'beta/gamma.md': 'nothing' } }),
      });
      const find = await body<{ matches: { path: string }[] }>(
        await go(`/filesystem-find/${enc(`${dir}/s`)}?patterns=*.md`),
      );
      expect(find.matches.map((m) => m.path).sort()).toEqual([`${dir}/s/alpha.md`, `${dir}/s/beta/gamma.md`]);
      const fuzzy = await body<{ matches: { path: string }[] }>(
        await go(`/filesystem-search/${enc(`${dir}/s`)}?query=gama`),
      );
      expect(fuzzy.matches[0]?.path).toBe(`${dir}/s/beta/gamma.md`);
      const content = await body<{ matches: { path: string }[] }>(
        await go(`/filesystem-content-search/${enc(`${dir}/s`)}?query=needle`),
      );
      expect(content.matches.map((m) => m.path)).toEqual([`${dir}/s/alpha.md`]);
    });

    it('watch: a write in the watched directory streams an event', async () => {
      await go(`/filesystem/${enc(`${dir}/w`)}`, {
        method: 'PUT',
        body: JSON.stringify({ isDirectory: true }),
      });
      const ctl = new AbortController();
      // sandboxd sends the stream's headers with its first line, so write before awaiting them.
      const pending = go(`/watch/filesystem/${enc(`${dir}/w`)}`, { signal: ctl.signal });
      await new Promise((r) => setTimeout(r, 300));
      await go(`/filesystem/${enc(`${dir}/w/new.txt`)}`, {
        method: 'PUT',
        body: JSON.stringify({ content: '1' }),
      });
      const res = await pending;
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('new.txt')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      ctl.abort();
      expect(text).toContain('new.txt');
    });

    it('process: exec and wait, stream, list, get, logs, logs/stream, stop, kill', async () => {
      const run = await body<{ exitCode: number; stdout: string; pid: string }>(
        await go('/process', {
          method: 'POST',
          body: JSON.stringify({ command: 'echo hi-$((1+1))', waitForCompletion: true, name: `e-${style}` }),
        }),
      );
      expect(run).toMatchObject({ exitCode: 0 });
      expect(run.stdout.trim()).toBe('hi-2');
      const streamed = await go('/process', {
        method: 'POST',
        headers: { accept: 'text/event-stream' },
        body: JSON.stringify({ command: 'echo streamed', waitForCompletion: true }),
      });
      const events = (await streamed.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: string });
      expect(events.some((e) => e.type === 'stdout' && e.data.includes('streamed'))).toBe(true);
      expect(events.at(-1)?.type).toBe('result');
      const list = await body<{ name: string }[]>(await go('/process'));
      expect(list.map((x) => x.name)).toContain(`e-${style}`);
      expect((await body<{ status: string }>(await go(`/process/e-${style}`))).status).toBe('completed');
      expect((await body<{ stdout: string }>(await go(`/process/e-${style}/logs`))).stdout).toContain('hi-2');
      const logStream = await go(`/process/e-${style}/logs/stream`);
      expect(await logStream.text()).toContain('stdout:hi-2');
      // Long-running ones: stop (SIGTERM) and kill (SIGKILL).
      for (const [n, route] of [
        [`s-${style}`, ''],
        [`k-${style}`, '/kill'],
      ] as const) {
        await go('/process', { method: 'POST', body: JSON.stringify({ command: 'sleep 300', name: n }) });
        const r = await go(`/process/${n}${route}`, { method: 'DELETE' });
        expect(r.status, await r.clone().text()).toBe(200);
        let status = '';
        for (let i = 0; i < 50 && (status === '' || status === 'running'); i++) {
          status = (await body<{ status: string }>(await go(`/process/${n}`))).status;
          if (status === 'running') await new Promise((res) => setTimeout(res, 100));
        }
        expect(status).not.toBe('running');
      }
    });

    it('network: open ports of a process, port monitor start and stop, tunnel routes answer', async () => {
      const server = await body<{ pid: string }>(
        await go('/process', {
          method: 'POST',
          body: JSON.stringify({
            command: `python3 -m http.server ${style === 'host' ? 8101 : 8102} --bind 0.0.0.0`,
            name: `http-${style}`,
            waitForPorts: [style === 'host' ? 8101 : 8102],
            timeout: 30,
          }),
        }),
      );
      const ports = await body<{ ports: { localPort: number }[] }>(
        await go(`/network/process/${server.pid}/ports`),
      );
      expect(ports.ports.map((x) => x.localPort)).toContain(style === 'host' ? 8101 : 8102);
      const mon = await go(`/network/process/${server.pid}/monitor`, {
        method: 'POST',
        body: JSON.stringify({ callback: 'http://127.0.0.1:9/cb' }),
      });
      expect(mon.status, await mon.clone().text()).toBe(200);
      expect((await go(`/network/process/${server.pid}/monitor`, { method: 'DELETE' })).status).toBe(200);
      await go(`/process/http-${style}/kill`, { method: 'DELETE' });
      // The tunnel routes are answered by the platform (tunnel/tunnel-routes.ts): a bad config is a
      // 4xx with an {error}, never a 5xx or a hang.
      const bad = await go('/network/tunnel/config', {
        method: 'PUT',
        body: JSON.stringify({ config: 'bm90IGpzb24=' }),
      });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expect(typeof (await body<{ error: string }>(bad)).error).toBe('string');
    });

    it('terminal: typing a command over the WebSocket reads its output', async () => {
      const base = sandboxBase(p!, NAME, style).replace(/^http/, 'ws');
      const ws = await openSocket(`${base}/terminal/ws?sessionId=t-${style}`, {
        authorization: `Bearer ${p!.credentials.apiKey}`,
      });
      try {
        const out = await typeAndRead(ws, 'echo term-$((6*7))', 'term-42');
        expect(out).toContain('term-42');
      } finally {
        ws.close();
      }
    });

    it('MCP: the official client lists tools and runs fs and process tools', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${sandboxBase(p!, NAME, style)}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${p!.credentials.apiKey}` } },
        fetch: style === 'host' ? hostFetch : fetch,
      });
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(transport);
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['fsReadFile', 'fsWriteFile', 'processExecute', 'processesList']),
        );
        const write = await client.callTool({
          name: 'fsWriteFile',
          arguments: { path: `${dir}/mcp.txt`, content: 'via mcp' },
        });
        expect(write.isError).toBeFalsy();
        const read = await client.callTool({ name: 'fsReadFile', arguments: { path: `${dir}/mcp.txt` } });
        expect(JSON.stringify(read.content)).toContain('via mcp');
        const exec = await client.callTool({
          name: 'processExecute',
          arguments: { command: 'echo mcp-ok', waitForCompletion: true },
        });
        expect(JSON.stringify(exec.content)).toContain('mcp-ok');
      } finally {
        await client.close();
      }
    });
  });
});
