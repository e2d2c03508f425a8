// Node's global fetch inside a real sandbox goes out through the platform's egress proxy (issue 6:
// "an HTTP(S) forward proxy that clients inside use automatically"). Node's fetch ignores the proxy
// variables; the platform sets NODE_OPTIONS=--require /.tarmac/lib/node-proxy.cjs (packages/sandboxd
// src/preload/). Checked with both nodes a sandbox may run: the image's own (Debian 12: 18.x) and
// the platform's node 20 in /.tarmac, against an upstream in a namespace of our own: plain HTTP,
// HTTPS intercepted with the platform CA (NODE_EXTRA_CA_CERTS) and a routing header injected,
// NO_PROXY to localhost, a forbidden domain answered 403 — and, as the control, the same fetch
// without the preload has no way out.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  missingCapability,
  startSandboxPlatform,
} from '../sandboxes/support.js';
import { makeOutsideCerts, type OutsideCerts } from './support/certs.js';
import {
  createNamespace,
  netnsUnavailable,
  removeNamespace,
  startIn,
  type Namespace,
} from './support/netns.js';

const missing = missingCapability() ?? netnsUnavailable() ?? null;
const outside: Namespace = { name: 'tmnf-out', hostIf: 'tmnfo0', hostIp: '10.231.5.1', nsIp: '10.231.5.2' };
const SECRET = 'sk_node_f3tch-s3cr3t';
const SUPPORT = join(import.meta.dirname, 'support');
const NAME = 'node-fetch-a';

/** One fetch, its outcome as one JSON line (run as a file, so argv[1] is a user script). */
const FETCH_JS = `
const [url, method = 'GET', body] = process.argv.slice(2);
fetch(url, { method, body, headers: body ? { 'content-type': 'application/json' } : {} })
  .then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text(), node: process.version })))
  .catch((e) => console.log(JSON.stringify({ error: String(e), cause: String(e.cause?.message ?? e.cause), node: process.version })));
`;
/** A server on the sandbox's loopback and a fetch to it: NO_PROXY=localhost,127.0.0.1 goes direct. */
const LOCAL_JS = `
require('http').createServer((q, r) => r.end('local ' + q.url)).listen(0, '127.0.0.1', function () {
  fetch('http://127.0.0.1:' + this.address().port + '/nf-local').then((r) => r.text())
    .then((t) => { console.log(t); process.exit(0); }, (e) => { console.log('error ' + (e.cause?.message ?? e)); process.exit(1); });
});
`;

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
  cause?: string;
  node: string;
}

describe.skipIf(missing !== null)(`node fetch egress${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  let dir: string;
  let certs: OutsideCerts;
  let server: ChildProcess | undefined;
  /** The two ways to run node in the sandbox: the image's, and the platform's node 20. */
  const nodes: Record<string, string> = {
    image: 'node',
    platform: '"$(ls /.tarmac/lib/ld-linux*.so* | head -n 1)" --library-path /.tarmac/lib /.tarmac/bin/node',
  };

  async function seenAt(marker: string) {
    const res = await fetch(`http://${outside.nsIp}:8081/`);
    const all = (await res.json()) as {
      url: string;
      host: string;
      headers: Record<string, string>;
      body: string;
    }[];
    return all.filter((r) => r.url.includes(marker));
  }

  async function nodeFetch(which: string, args: string[], envPrefix = ''): Promise<Outcome> {
    const quoted = args.map((a) => `'${a}'`).join(' ');
    const r = await exec(p!, NAME, `${envPrefix}${nodes[which]} /tmp/nf.js ${quoted}`);
    expect(r.exitCode, `${r.stdout ?? ''} ${r.stderr ?? ''}`).toBe(0);
    // Nothing on stderr: the preload prints no warnings into programs' output.
    expect(r.stderr ?? '').toBe('');
    return JSON.parse((r.stdout ?? '').trim()) as Outcome;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-node-fetch-'));
    certs = makeOutsideCerts(dir, ['outside.test', '*.outside.test']);
    createNamespace(outside);
    server = await startIn(outside.name, process.execPath, [
      join(SUPPORT, 'outside-server.mjs'),
      JSON.stringify({
        bind: outside.nsIp,
        httpPort: 80,
        httpsPort: 443,
        badHttpsPort: 8443,
        tcpPort: 7000,
        controlPort: 8081,
        ...certs,
      }),
    ]);
    const o = outside.nsIp;
    p = await startSandboxPlatform({
      env: {
        TARMAC_EGRESS_RESOLVE: `api.outside.test=${o},web.outside.test=${o},plain.outside.test=${o}`,
        TARMAC_EGRESS_EXTRA_CA: certs.caFile,
        // In the shared range 3128–3147, which every platform on this bridge keeps open when it
        // rewrites the bridge's INPUT chain (egress-plane.ts SHARED_PORTS); the harness's random
        // port was dropped whenever another test's platform started on the e2e bridge meanwhile.
        TARMAC_EGRESS_PORT: '3128',
      },
    });
    await createSandbox(
      p,
      NAME,
      {
        network: {
          proxy: {
            allowedDomains: ['*.outside.test'],
            forbiddenDomains: ['plain.outside.test'],
            routing: [
              {
                destinations: ['api.outside.test'],
                headers: { Authorization: 'Bearer {{SECRET:key}}' },
                secrets: { key: SECRET },
              },
            ],
          },
        },
      },
      { memory: 512 },
    );
    const write = (file: string, text: string) =>
      exec(p!, NAME, `echo ${Buffer.from(text).toString('base64')} | base64 -d > ${file}`);
    await write('/tmp/nf.js', FETCH_JS);
    await write('/tmp/nf-local.js', LOCAL_JS);
  }, 15 * 60_000);

  afterAll(async () => {
    await cleanUp(p, [NAME]);
    server?.kill('SIGKILL');
    removeNamespace(outside);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('every process gets NODE_OPTIONS with the preload, which the runtime ships', async () => {
    const r = await exec(
      p!,
      NAME,
      'printf %s "$NODE_OPTIONS"; echo; ls /.tarmac/lib/node-proxy.cjs /.tarmac/lib/node-proxy-agent.cjs',
    );
    expect(r.stdout).toContain('--require /.tarmac/lib/node-proxy.cjs\n');
    expect(r.stdout).toContain('/.tarmac/lib/node-proxy-agent.cjs');
    const versions = await exec(p!, NAME, `${nodes.image} --version; ${nodes.platform} --version`);
    expect(versions.stdout).toMatch(/^v\d+\.\d+\.\d+\nv20\.\d+\.\d+\n$/);
  });

  for (const which of ['image', 'platform']) {
    describe(`with the ${which}'s node`, () => {
      it('plain HTTP goes through the proxy (absolute URI, so routing applies to it too)', async () => {
        const tag = `nf-http-${which}`;
        const r = await nodeFetch(which, [`http://web.outside.test/${tag}`]);
        expect(r.status, JSON.stringify(r)).toBe(200);
        expect(JSON.parse(r.body ?? '{}')).toMatchObject({ ok: true, scheme: 'http' });
        const [got] = await seenAt(tag);
        expect(got?.host).toBe('web.outside.test');
        expect(got?.headers.authorization).toBeUndefined();
        const routed = await nodeFetch(which, [`http://api.outside.test/nf-http-routed-${which}`]);
        expect(routed.status, JSON.stringify(routed)).toBe(200);
        const [injected] = await seenAt(`nf-http-routed-${which}`);
        expect(injected?.headers.authorization).toBe(`Bearer ${SECRET}`);
      });

      it('HTTPS is intercepted with the platform CA (trusted by node) and the routing header injected', async () => {
        const tag = `nf-https-${which}`;
        const r = await nodeFetch(which, [`https://api.outside.test/${tag}`, 'POST', '{"q":1}']);
        expect(r.status, JSON.stringify(r)).toBe(200);
        expect(JSON.parse(r.body ?? '{}')).toMatchObject({ ok: true, scheme: 'https' });
        const [got] = await seenAt(tag);
        expect(got?.headers.authorization).toBe(`Bearer ${SECRET}`);
        expect(JSON.parse(got?.body ?? '{}')).toEqual({ q: 1 });
        // A passed-through (not routed) HTTPS destination is a plain CONNECT tunnel: node meets the
        // upstream's own certificate (from the test's CA, which only the proxy trusts), not one of
        // the platform CA's.
        const plain = await nodeFetch(which, [`https://web.outside.test/nf-https-pass-${which}`]);
        expect(plain.cause, JSON.stringify(plain)).toBe('unable to verify the first certificate');
      });

      it('a forbidden domain is answered 403 by the proxy; nothing reaches it', async () => {
        const http = await nodeFetch(which, [`http://plain.outside.test/nf-forbidden-${which}`]);
        expect(http.status, JSON.stringify(http)).toBe(403);
        expect(JSON.parse(http.body ?? '{}').error).toContain(
          'proxy.forbiddenDomains rule "plain.outside.test"',
        );
        // HTTPS: the 403 answers the CONNECT, so fetch fails, with a cause that says so.
        const https = await nodeFetch(which, [`https://plain.outside.test/nf-forbidden-s-${which}`]);
        expect(https.error, JSON.stringify(https)).toContain('fetch failed');
        expect(https.cause).toBe(
          'the egress proxy answered 403 to CONNECT https://plain.outside.test (refused by the sandbox network policy)',
        );
        expect(await seenAt(`nf-forbidden`)).toEqual([]);
      });

      it('NO_PROXY (localhost) goes direct: a server on the sandbox loopback answers', async () => {
        const r = await exec(p!, NAME, `${nodes[which]} /tmp/nf-local.js`);
        expect(r.stdout?.trim(), r.stderr ?? '').toBe('local /nf-local');
      });
    });
  }

  it('control: without the preload, the same fetch has no way out', async () => {
    const r = await nodeFetch('platform', [`http://${outside.nsIp}/nf-control`], 'NODE_OPTIONS= ');
    expect(r.error, JSON.stringify(r)).toContain('fetch failed');
    expect(await seenAt('nf-control')).toEqual([]);
  });
});
