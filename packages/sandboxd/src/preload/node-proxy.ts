// Preloaded into every Node process of a sandbox (NODE_OPTIONS=--require /.tarmac/lib/node-proxy.cjs,
// set by the platform's egress setup): makes the global `fetch` use the egress proxy. Issue 6: "a
// sandbox reaches the outside only through the platform's egress path: an HTTP(S) forward proxy
// that clients inside use automatically (proxy environment variables set for every process)" —
// and Node's fetch (undici) ignores HTTP_PROXY/HTTPS_PROXY/NO_PROXY.
//
// Node's fetch asks for its dispatcher at globalThis[Symbol.for('undici.globalDispatcher.1')] on
// every request (the same slot undici's setGlobalDispatcher writes). We put there a stand-in that
// loads the real one — undici's EnvHttpProxyAgent (node-proxy-agent.ts), bundled next to this
// file as node-proxy-agent.cjs — on first use, so a node program that never fetches pays only for reading
// this small file. The agent reads HTTP(S)_PROXY and NO_PROXY itself, so NO_PROXY is honoured.
// TLS goes through tls.connect without a `ca`, i.e. Node's default store plus NODE_EXTRA_CA_CERTS
// (the platform CA the proxy intercepts with).
//
// This file runs in whatever `node` the image has (Debian 12: 18.19, undici 5): it is built for
// old syntax, does nothing on a node too old for the bundled undici (6.x needs 18.17), and never
// throws — a broken preload would break every node program in the sandbox.
import { join } from 'node:path';
import type { createAgent as CreateAgent } from './node-proxy-agent.js';

type Dispatcher = object;

const DISPATCHER = Symbol.for('undici.globalDispatcher.1');
/**
 * The platform's own node processes in the sandbox (sandboxd: /.tarmac/sandboxd.mjs or its loader
 * /.tarmac/lib/sandboxd-boot.cjs) are left as they were: sandboxd calls only localhost and
 * port-monitor callbacks, and its start must stay fast.
 */
const PLATFORM_DIR = '/.tarmac/';

/** Whether this process should get the proxy agent: proxy vars present, a new enough node, not sandboxd. */
export function wanted(env: NodeJS.ProcessEnv, nodeVersion: string, argv: readonly string[]): boolean {
  const proxy = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  if (!proxy) return false;
  if (argv[1]?.startsWith(PLATFORM_DIR)) return false;
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  return major > 18 || (major === 18 && minor >= 17);
}

/** A dispatcher that becomes `load()`'s on first touch (Node's fetch only calls dispatch()). */
export function lazyDispatcher(load: () => Dispatcher): Dispatcher {
  let real: Dispatcher | undefined;
  const target = (): Dispatcher => (real ??= load());
  return new Proxy(
    {},
    {
      get(_, prop) {
        const t = target();
        const v: unknown = Reflect.get(t, prop, t);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
      has: (_, prop) => Reflect.has(target(), prop),
      set: (_, prop, value) => Reflect.set(target(), prop, value),
      getPrototypeOf: () => Reflect.getPrototypeOf(target()),
    },
  );
}

/** Puts the lazy proxy agent in fetch's dispatcher slot when `wanted` (main.ts passes the process's). */
export function install(env: NodeJS.ProcessEnv, nodeVersion: string, argv: readonly string[]): void {
  if (!wanted(env, nodeVersion, argv)) return;
  const g = globalThis as Record<symbol, unknown>;
  if (g[DISPATCHER] !== undefined) return; // one was set before us (another preload): keep it
  // __dirname: the bundle's directory, /.tarmac/lib in a sandbox.
  const agentFile = join(__dirname, 'node-proxy-agent.cjs');
  // Same property shape as undici's setGlobalDispatcher, so a program calling it later still can.
  Object.defineProperty(globalThis, DISPATCHER, {
    value: lazyDispatcher(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS preload loading its sibling
      const { createAgent } = require(agentFile) as { createAgent: typeof CreateAgent };
      return createAgent();
    }),
    writable: true,
    enumerable: false,
    configurable: false,
  });
}
