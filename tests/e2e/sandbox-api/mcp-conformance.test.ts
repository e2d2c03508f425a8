// The sandbox MCP endpoint against the official conformance suite and a browser (issue 14 item 7):
// `@modelcontextprotocol/conformance` run against a real sandbox's /mcp through the platform
// gateway; a browser-style CORS preflight and MCP call; and the DNS-rebinding attack (a page on
// evil.example whose name resolves to the platform) refused.
//
// The suite is installed by this test into a temp directory (`npm install --prefix`), never into
// the repository. 0.1.16 declares no `engines` but calls `fs.globSync` (Node >= 22): under an
// older node the test installs the `node` npm package (22.12.0) beside it and runs the suite
// with that binary.
//
// The suite has no option to send a bearer token, which the gateway requires: it talks to a
// loopback forwarder that adds `Authorization` and passes everything else — Host and Origin
// included — unchanged to the path-style URL `{run_url}/{ws}/sandboxes/{name}/mcp`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { cleanUp, createSandbox, missingCapability, startSandboxPlatform } from '../sandboxes/support.js';
import { call, loopbackLookup, sandboxBase } from './support.js';

const CONFORMANCE = '@modelcontextprotocol/conformance@0.1.16';
const NODE_FOR_SUITE = 'node@22.12.0';
const NETWORK = { TARMAC_BRIDGE: 'tarmaci14m', TARMAC_SUBNET: '10.156.0.0/16' };
const NAME = 'mcp-conf';

/**
 * Server scenarios that apply to a tools-only, stateless server; every one must pass. The rest of
 * the active and pending suites, and why they do not apply:
 * - logging-set-level, tools-call-with-logging: the server declares no `logging` capability.
 * - completion-complete, resources-*, prompts-*: no prompts or resources, so nothing to complete.
 * - tools-call-image/-audio/-embedded-resource/-mixed-content/-with-progress/-sampling/
 *   -elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums, json-schema-2020-12:
 *   each calls a fixture tool of the suite's reference server (`test_image_content`, …); the
 *   sandbox's tools are the reference sandbox API's (processExecute, fsReadFile, …), which return
 *   text, and it asks the client nothing (no sampling, no elicitation).
 * - tools-call-simple-text, tools-call-error: also fixture tools (`test_simple_text`,
 *   `test_error_handling`); they "pass" only because an unknown tool is an `isError` text result,
 *   so they prove nothing here and are not counted.
 * - server-sse-polling, server-sse-multiple-streams: SSE streams of a session; the endpoint is
 *   stateless with JSON responses (reference sandbox-api.md §1.9), so there is no session or
 *   stream (the suite reports them as not applicable, with no failure).
 */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;

const skip = missingCapability() ?? registryUnreachable();
let p: RunningPlatform | undefined;
let suiteDir = '';
let forwarder: Server | undefined;

/** The suite comes from the npm registry; without it the suite cannot be had at all. */
function registryUnreachable(): string | null {
  try {
    execFileSync('npm', ['view', CONFORMANCE, 'version'], { stdio: 'ignore', timeout: 60_000 });
    return null;
  } catch {
    return 'the npm registry is unreachable (npm view failed), so the conformance suite cannot be installed';
  }
}

/** Installs the suite (and a node it runs on, if ours is too old); returns that node's path. */
function installSuite(dir: string): string {
  const major = Number(process.versions.node.split('.')[0]);
  const packages = major >= 22 ? [CONFORMANCE] : [CONFORMANCE, NODE_FOR_SUITE];
  execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', ...packages], {
    stdio: 'pipe',
    timeout: 10 * 60_000,
  });
  return major >= 22 ? process.execPath : join(dir, 'node_modules/.bin/node');
}

/** Loopback forwarder adding the bearer token; Host, Origin and the rest pass unchanged. */
async function startForwarder(platform: RunningPlatform): Promise<Server> {
  const target = new URL(platform.url);
  const prefix = `/${platform.credentials.workspace}/sandboxes/${NAME}`;
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = {
      ...req.headers,
      authorization: `Bearer ${platform.credentials.apiKey}`,
    };
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        path: prefix + (req.url ?? '/'),
        method: req.method,
        headers,
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.once('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs one scenario; its checks from the suite's checks.json. */
async function runScenario(node: string, url: string, scenario: string): Promise<Check[]> {
  const out = join(suiteDir, 'out', scenario);
  const bin = join(suiteDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const args = [bin, 'server', '--url', url, '--scenario', scenario, '-o', out];
  const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += String(d)));
  child.stderr.on('data', (d: Buffer) => (log += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  await new Promise((r) => child.once('close', r));
  clearTimeout(timer);
  const dirs = readdirSync(out).filter((d) => d.startsWith(`server-${scenario}-`));
  expect(dirs, `no results for ${scenario}: ${log}`).toHaveLength(1);
  return JSON.parse(readFileSync(join(out, dirs[0]!, 'checks.json'), 'utf8')) as Check[];
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP exchange with headers fetch will not send (Host); `*.localhost` goes to loopback. */
function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        headers,
        lookup: loopbackLookup,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

beforeAll(async () => {
  if (skip) return;
  suiteDir = mkdtempSync(join(tmpdir(), 'tarmac-mcp-conformance-'));
  p = await startSandboxPlatform({ env: NETWORK });
  await createSandbox(p, NAME);
  forwarder = await startForwarder(p);
}, 15 * 60_000);

afterAll(async () => {
  if (forwarder) await new Promise((r) => forwarder!.close(r));
  if (suiteDir) rmSync(suiteDir, { recursive: true, force: true });
  await cleanUp(p, [NAME]);
}, 120_000);

describe.skipIf(skip)(`sandbox MCP endpoint${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it(
    'passes every conformance server scenario that applies to a tools-only server',
    async () => {
      const node = installSuite(suiteDir);
      const url = `http://localhost:${(forwarder!.address() as AddressInfo).port}/mcp`;
      const results: Record<string, string[]> = {};
      for (const scenario of APPLICABLE) {
        const checks = await runScenario(node, url, scenario);
        results[scenario] = checks
          .filter((c) => c.status === 'FAILURE' || c.status === 'SUCCESS')
          .map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`);
      }
      for (const scenario of APPLICABLE) {
        const lines = results[scenario] ?? [];
        expect(lines.length, `${scenario} ran no check`).toBeGreaterThan(0);
        expect(
          lines.filter((l) => !l.includes(': SUCCESS')),
          `${scenario}: ${lines.join('; ')}`,
        ).toEqual([]);
      }
    },
    12 * 60_000,
  );

  it('a browser-style client: the preflight is answered without credentials, then MCP works', async () => {
    const base = sandboxBase(p!, NAME, 'host');
    // The platform's own page (e.g. a console at the API origin) calling the sandbox host.
    const origin = p!.url;
    const pre = await raw(`${base}/mcp`, 'OPTIONS', {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id',
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    const allowed = String(pre.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'mcp-protocol-version',
        'mcp-session-id',
        'last-event-id',
      ]),
    );
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    const init = await raw(
      `${base}/mcp`,
      'POST',
      { ...MCP_HEADERS, origin, authorization: `Bearer ${p!.credentials.apiKey}` },
      INITIALIZE,
    );
    expect(init.status, init.body).toBe(200);
    expect(JSON.parse(init.body)).toMatchObject({ result: { serverInfo: { name: 'Sandbox API Server' } } });
    expect(init.headers['access-control-allow-origin']).toBe('*');
    expect(String(init.headers['access-control-expose-headers']).toLowerCase()).toContain('mcp-session-id');
    // 405 names what is allowed.
    const get = await call(p!, NAME, 'host', '/mcp');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('refuses a DNS-rebinding attack: Host or Origin evil.example gets 403 and runs nothing', async () => {
    const marker = '/tmp/rebound-by-evil';
    const toolCall = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'processExecute', arguments: { command: `touch ${marker}`, waitForCompletion: true } },
    });
    const auth = { authorization: `Bearer ${p!.credentials.apiKey}` };
    const pathStyle = `${p!.url}/${p!.credentials.workspace}/sandboxes/${NAME}/mcp`;
    // The rebound page: its own name in Host and Origin, reaching the platform's address.
    const evilHost = await raw(
      pathStyle,
      'POST',
      { ...MCP_HEADERS, ...auth, host: 'evil.example', origin: 'http://evil.example' },
      toolCall,
    );
    expect(evilHost.status, evilHost.body).toBe(403);
    expect(evilHost.body).toContain('Invalid Host header: evil.example');
    // A real sandbox host, but a foreign page's Origin.
    const evilOrigin = await raw(
      `${sandboxBase(p!, NAME, 'host')}/mcp`,
      'POST',
      { ...MCP_HEADERS, ...auth, origin: 'http://evil.example' },
      toolCall,
    );
    expect(evilOrigin.status, evilOrigin.body).toBe(403);
    expect(evilOrigin.body).toContain('Invalid Origin header: http://evil.example');
    // Another tenant's preview host is not this sandbox's either.
    const preview = await raw(
      pathStyle,
      'POST',
      { ...MCP_HEADERS, ...auth, origin: 'http://abc123.local.preview.localhost' },
      toolCall,
    );
    expect(preview.status, preview.body).toBe(403);
    const stat = await call(p!, NAME, 'path', `/filesystem/${encodeURIComponent(marker)}`);
    expect(stat.status).toBe(404); // the command never ran
    // The same call from a non-browser client (no Origin) on the platform's host is served.
    const ok = await raw(pathStyle, 'POST', { ...MCP_HEADERS, ...auth }, INITIALIZE);
    expect(ok.status, ok.body).toBe(200);
  });
});
