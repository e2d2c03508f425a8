// The part of the fetch preload that is heavy (undici, ~400 KB, ~35 ms to load): loaded by
// node-proxy.ts on a process's first fetch. Bundled as lib/node-proxy-agent.cjs. undici 6.24.1 is
// the version inside Node 20 (process.versions.undici), so its dispatcher speaks exactly the
// handler protocol Node's built-in fetch uses; undici 5's fetch (Node 18) calls the same legacy
// handler methods.
import { EnvHttpProxyAgent, type Dispatcher } from 'undici';

/**
 * HTTP(S)_PROXY / NO_PROXY from the environment, like curl: `http://` requests go to the proxy as
 * absolute-URI requests (proxyTunnel: false), so the egress proxy sees them as HTTP and applies
 * routing injection to them too; `https://` goes through CONNECT.
 */
export function createAgent(): Dispatcher {
  // undici marks EnvHttpProxyAgent experimental with a process warning on stderr; a program in a
  // sandbox did not ask for it and must not print it.
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const options = rest[0];
    const code =
      typeof options === 'object' && options !== null ? (options as { code?: unknown }).code : undefined;
    if (code === 'UNDICI-EHPA') return;
    (emitWarning as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const options = { proxyTunnel: false } as ConstructorParameters<typeof EnvHttpProxyAgent>[0];
    return new EnvHttpProxyAgent(options).compose(explainRefusedTunnel);
  } finally {
    process.emitWarning = emitWarning;
  }
}

const TUNNEL_REFUSED = /^Proxy response \((\d+)\) !== 200 when HTTP Tunneling$/;

/**
 * undici reports a CONNECT the proxy refused (403 by policy, 502/504 unreachable) as an abort,
 * which fetch shows as "Request was cancelled."; curl says "CONNECT tunnel failed, response 403".
 * Say what happened instead. (Rewriting the handler's onError in place is what undici's own
 * ProxyAgent does with onHeaders.)
 */
export function explainRefusedTunnel(dispatch: Dispatcher['dispatch']): Dispatcher['dispatch'] {
  return (opts, handler) => {
    const onError = handler.onError;
    if (typeof onError === 'function') {
      handler.onError = function (this: unknown, err: Error) {
        const status = TUNNEL_REFUSED.exec(err?.message ?? '')?.[1];
        if (status === undefined) return onError.call(this, err);
        const why = status === '403' ? ' (refused by the sandbox network policy)' : '';
        const origin = typeof opts.origin === 'string' ? opts.origin : String(opts.origin ?? '');
        const explained = Object.assign(
          new Error(`the egress proxy answered ${status} to CONNECT ${origin}${why}`, { cause: err }),
          { code: 'TARMAC_EGRESS_REFUSED', statusCode: Number(status) },
        );
        return onError.call(this, explained);
      };
    }
    return dispatch(opts, handler);
  };
}
