// Issue 16: an MCP server built from the official TypeScript MCP SDK (examples/mcp-server:
// McpServer + StreamableHTTPServerTransport on PORT) deployed as a function through the builds
// plane, called with the official MCP client at {run_url}/{ws}/functions/{name}/mcp: tools/list
// and tools/call answer, and the tool sees its integration connection's secret as env (it returns
// a fingerprint of it; the secret shows in no response). Tests have no internet, so the example is
// bundled with esbuild (the SDK from this repository's node_modules) into one file with a
// dependency-free package.json — the build then needs no npm; a user deploys the folder itself
// (`tarmac deploy examples/mcp-server`, npm installs the SDK during the build: its README).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import { filesContaining } from '../../../packages/engine/src/test-support/files-containing.js';
import { REPO_ROOT, type RunningPlatform } from '../support/platform.js';
import { closeRunPlatform, removeRunWorkloads } from '../support/run-workloads.js';
import { json, missingBuildCapability, startSandboxPlatform, waitFor } from '../sandboxes/support.js';

const skip = missingBuildCapability();
const SECRET = `mcp-s3cret-${Math.random().toString(36).slice(2)}`;

/** The example bundled into one ESM file (Node 18 in tarmac/base), `require` shimmed for CJS deps. */
async function bundledExample(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-mcp-'));
  await build({
    entryPoints: [join(REPO_ROOT, 'examples', 'mcp-server', 'server.js')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node18',
    outfile: join(dir, 'server.mjs'),
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  const text = readFileSync(join(dir, 'server.mjs'), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return text;
}

describe.skipIf(skip !== null)(
  `run plane: an MCP server from the MCP SDK${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let p: RunningPlatform;
    let workspaceId = '';
    const ids = new Set<string>();
    const api = (path: string, init: RequestInit = {}) => p.api(path, init);

    beforeAll(async () => {
      const server = await bundledExample();
      p = await startSandboxPlatform({
        env: {
          TARMAC_BRIDGE: 'tarmacrv1',
          TARMAC_SUBNET: '10.111.0.0/16',
          TARMAC_RUN_READY_TIMEOUT_SECONDS: '30',
          TARMAC_RUN_HOLD_SECONDS: '90',
        },
      });
      workspaceId =
        (await json<{ id?: string }>(await api(`/v0/workspaces/${p.credentials.workspace}`))).id ?? '';
      const conn = await api('/v0/integrations/connections', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'mcp-conn' },
          spec: { integration: 'github', secret: { API_TOKEN: SECRET } },
        }),
      });
      expect(conn.status, await conn.clone().text()).toBe(200);
      const open = await api('/v0/functions?upload=true', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'mcp-example' },
          spec: { integrationConnections: ['mcp-conn'], runtime: { memory: 256 } },
        }),
      });
      expect(open.status, await open.clone().text()).toBe(200);
      const pkg = { name: 'mcp-server', version: '1.0.0', type: 'module', main: 'server.mjs' };
      const upload = await fetch(open.headers.get('x-blaxel-upload-url')!, {
        method: 'PUT',
        body: zipOf([
          { name: 'server.mjs', data: server },
          { name: 'package.json', data: JSON.stringify(pkg) },
        ]),
        headers: { 'content-type': 'application/zip' },
      });
      expect(upload.status, await upload.clone().text()).toBe(200);
      const deployed = await waitFor(
        'functions/mcp-example DEPLOYED or FAILED',
        async () => {
          const r = await json<{ status: string; events: unknown[] }>(await api('/v0/functions/mcp-example'));
          return ['DEPLOYED', 'FAILED'].includes(r.status) ? r : undefined;
        },
        6 * 60_000,
      );
      expect(deployed.status, JSON.stringify(deployed.events)).toBe('DEPLOYED');
    }, 10 * 60_000);

    afterAll(async () => {
      if (!p) return;
      await removeRunWorkloads(p).catch(() => undefined);
      await closeRunPlatform(p, ids, workspaceId);
    }, 180_000);

    it('tools/list and tools/call through the run URL with the official MCP client; the connection secret is env', async () => {
      const url = new URL(`${p.credentials.runUrl}/${p.credentials.workspace}/functions/mcp-example/mcp`);
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${p.credentials.apiKey}` } },
      });
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(transport);
      try {
        expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/); // the SDK server's session
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        expect(tools).toEqual(['add', 'token_fingerprint']);
        const text = async (name: string, args: Record<string, unknown>) =>
          ((await client.callTool({ name, arguments: args })) as { content: Array<{ text: string }> })
            .content[0]!.text;
        const fingerprint = createHash('sha256').update(SECRET).digest('hex').slice(0, 16);
        expect(await text('token_fingerprint', {})).toBe(fingerprint);
        expect(await text('add', { a: 2, b: 40 })).toBe('42');
      } finally {
        await client.close();
      }
      // Private by default; the secret shows in no response.
      const anonymous = await fetch(url, { method: 'POST', body: '{}' });
      expect(anonymous.status).toBe(401);
      expect(await (await api('/v0/functions/mcp-example')).text()).not.toContain(SECRET);
      expect(await (await api('/v0/integrations/connections/mcp-conn')).text()).not.toContain(SECRET);
      // Nor on the host's disk: not in the home (the store keeps it encrypted; the replica's
      // records, logs and disk), only in the replica's runc bundle on the engine's tmpfs.
      expect(filesContaining(p.home, SECRET)).toEqual([]);
      const held = filesContaining('/run/tarmac', SECRET);
      expect(held.length).toBeGreaterThan(0);
      for (const f of held) expect(f).toMatch(/^\/run\/tarmac\/bundles\/[^/]+\/(boot-env|config)\.json$/);
    }, 120_000);
  },
);
