// The fetch preload, built like the sandbox gets it (scripts/bundle-preload.mjs) and loaded into
// real node processes with NODE_OPTIONS=--require: fetch goes through HTTP_PROXY, NO_PROXY goes
// direct, no proxy variables change nothing, and the agent is loaded only on the first fetch.
// The HTTPS path (CONNECT, interception, the platform CA) is proven against the real egress proxy
// in tests/e2e/network/node-fetch-egress.test.ts.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyDispatcher, wanted } from './node-proxy.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '../..');
let dir = '';
let proxy: Server;
let direct: Server;
let proxyPort = 0;
let directPort = 0;
const seenByProxy: string[] = [];
const seenDirect: string[] = [];

function listen(s: Server): Promise<number> {
  return new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)),
  );
}

/** Answers with who answered and the request line it got (a proxy gets the absolute URI). */
/** Proxy-Authorization of every request the proxy got (issue 19 item 3: the sandbox's credentials). */
const proxyAuth: (string | undefined)[] = [];

function recorder(name: string, seen: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.url ?? '');
    if (name === 'proxy') proxyAuth.push(req.headers['proxy-authorization']);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ by: name, url: req.url }));
  };
}

/** Runs `node -e script` with the preload and only the given environment. */
function node(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-e', script],
      {
        env: {
          PATH: process.env.PATH ?? '',
          NODE_OPTIONS: `--require ${join(dir, 'node-proxy.cjs')}`,
          ...env,
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'node-proxy-'));
  execFileSync(process.execPath, [join(pkg, 'scripts/bundle-preload.mjs'), dir]);
  proxy = createServer(recorder('proxy', seenByProxy));
  direct = createServer(recorder('direct', seenDirect));
  // A CONNECT refused like the egress proxy refuses a forbidden domain.
  proxy.on('connect', (req: IncomingMessage, socket: Socket) => {
    seenByProxy.push(`CONNECT ${req.url ?? ''}`);
    proxyAuth.push(req.headers['proxy-authorization']);
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
  });
  proxyPort = await listen(proxy);
  directPort = await listen(direct);
}, 60_000);

afterAll(() => {
  proxy?.close();
  direct?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const FETCH = (url: string) =>
  `fetch(${JSON.stringify(url)}).then(r => r.text()).then(t => console.log(t), e => { console.error(e.cause ?? e); process.exit(3); })`;

describe('node-proxy preload', () => {
  it('sends the global fetch through HTTP_PROXY (absolute URI at the proxy)', async () => {
    const r = await node(FETCH('http://outside.example.test/through?x=1'), {
      HTTP_PROXY: `http://127.0.0.1:${proxyPort}`,
      HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`,
    });
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ by: 'proxy', url: 'http://outside.example.test/through?x=1' });
    expect(seenByProxy).toContain('http://outside.example.test/through?x=1');
  });

  it('sends HTTPS as CONNECT, and says so when the proxy refuses the tunnel (not "Request was cancelled.")', async () => {
    const r = await node(FETCH('https://forbidden.example.test/x'), {
      HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`,
    });
    expect(seenByProxy).toContain('CONNECT forbidden.example.test:443');
    expect(r.code).toBe(3);
    expect(r.err).toContain('the egress proxy answered 403 to CONNECT https://forbidden.example.test');
    expect(r.err).toContain('refused by the sandbox network policy');
  });

  it('sends the credentials of the proxy URL as Proxy-Authorization, for HTTP and CONNECT', async () => {
    const url = `http://rec-1:${'ab'.repeat(32)}@127.0.0.1:${proxyPort}`;
    const expected = `Basic ${Buffer.from(`rec-1:${'ab'.repeat(32)}`).toString('base64')}`;
    proxyAuth.length = 0;
    const http = await node(FETCH('http://outside.example.test/with-credentials'), { HTTP_PROXY: url });
    expect(JSON.parse(http.out)).toEqual({
      by: 'proxy',
      url: 'http://outside.example.test/with-credentials',
    });
    const https = await node(FETCH('https://forbidden.example.test/with-credentials'), { HTTPS_PROXY: url });
    expect(https.code).toBe(3); // the test proxy refuses every CONNECT
    expect(proxyAuth).toEqual([expected, expected]);
  });

  it('honours the lower-case variables and NO_PROXY (direct to a listed host)', async () => {
    const r = await node(FETCH(`http://127.0.0.1:${directPort}/no-proxy`), {
      http_proxy: `http://127.0.0.1:${proxyPort}`,
      no_proxy: 'localhost,127.0.0.1',
    });
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ by: 'direct', url: '/no-proxy' });
    expect(seenByProxy.some((u) => u.includes('no-proxy'))).toBe(false);
  });

  it('changes nothing without proxy variables', async () => {
    const r = await node(FETCH(`http://127.0.0.1:${directPort}/plain`), {});
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ by: 'direct', url: '/plain' });
    const g = await node("console.log(String(globalThis[Symbol.for('undici.globalDispatcher.1')]))", {});
    expect(g.out.trim()).toBe('undefined');
  });

  it('loads the undici agent only on the first fetch', async () => {
    const env = { HTTP_PROXY: `http://127.0.0.1:${proxyPort}` };
    const loaded = "Object.keys(require.cache).some(f => f.endsWith('node-proxy-agent.cjs'))";
    const before = await node(`console.log(${loaded})`, env);
    expect(before.out.trim()).toBe('false');
    const after = await node(
      `fetch('http://outside.example.test/lazy').then(() => console.log(${loaded}))`,
      env,
    );
    expect(after.err).toBe('');
    expect(after.out.trim()).toBe('true');
  });

  it("a program's own setGlobalDispatcher-style assignment still wins", async () => {
    // undici's setGlobalDispatcher redefines the property; our stand-in must let it.
    const r = await node(
      `const k = Symbol.for('undici.globalDispatcher.1');
       Object.defineProperty(globalThis, k, { value: { dispatch() { throw new Error('mine') } }, writable: true, enumerable: false, configurable: false });
       fetch('http://outside.example.test/x').then(() => console.log('no'), (e) => console.log(e.cause?.message ?? e.message))`,
      { HTTP_PROXY: `http://127.0.0.1:${proxyPort}` },
    );
    expect(r.out.trim()).toBe('mine');
  });
});

describe('wanted', () => {
  const env = { HTTPS_PROXY: 'http://10.200.0.1:3128' };
  it('needs a proxy variable', () => {
    expect(wanted({}, '20.20.2', ['node', '/app/x.js'])).toBe(false);
    expect(wanted(env, '20.20.2', ['node', '/app/x.js'])).toBe(true);
    expect(wanted({ http_proxy: 'http://p:1' }, '22.1.0', ['node'])).toBe(true);
  });
  it("leaves the platform's own processes (sandboxd and its loader) alone", () => {
    expect(wanted(env, '20.20.2', ['node', '/.tarmac/sandboxd.mjs', '--port', '8080'])).toBe(false);
    expect(wanted(env, '20.20.2', ['node', '/.tarmac/lib/sandboxd-boot.cjs', '--port', '8080'])).toBe(false);
  });
  it('does nothing on a node older than the bundled undici supports (18.17)', () => {
    expect(wanted(env, '18.16.1', ['node'])).toBe(false);
    expect(wanted(env, '16.20.0', ['node'])).toBe(false);
    expect(wanted(env, '18.19.0', ['node'])).toBe(true);
  });
});

describe('lazyDispatcher', () => {
  it('loads once, on first use, and forwards calls bound to the real dispatcher', () => {
    let loads = 0;
    const real = {
      n: 1,
      dispatch(this: { n: number }) {
        return this.n;
      },
    };
    const d = lazyDispatcher(() => {
      loads += 1;
      return real;
    }) as typeof real;
    expect(loads).toBe(0);
    expect(d.dispatch()).toBe(1);
    expect(d.dispatch()).toBe(1);
    expect('dispatch' in d).toBe(true);
    expect(loads).toBe(1);
  });
});
