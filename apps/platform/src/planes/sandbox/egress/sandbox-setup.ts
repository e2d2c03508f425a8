// What every sandbox gets so that its processes use the egress proxy and trust its CA (brief,
// phase 2): proxy variables in the environment, and the platform CA in the system trust store
// (bind-mounted read-only over Debian's bundle path) plus the variables the common TLS stacks
// read. No secret is here: secrets are only ever written by the proxy, outside the sandbox.
import type { HostFile } from '@tarmac/engine';
import type { EgressCaFiles } from './ca-files.js';

/** Debian/Ubuntu's system bundle (curl, git, OpenSSL, Python's ssl all read it there). */
export const SYSTEM_BUNDLE_IN_SANDBOX = '/etc/ssl/certs/ca-certificates.crt';
/** The CA alone, where Debian keeps local CAs (update-ca-certificates would pick it up too). */
export const CA_IN_SANDBOX = '/usr/local/share/ca-certificates/tarmac-egress-ca.crt';
/**
 * Node's fetch ignores the proxy variables: this preload (packages/sandboxd src/preload/, shipped
 * by the engine in the runtime at /.tarmac/lib) points it at the proxy. --require, not --import:
 * every node an image may have understands it (ARCHITECTURE.md "Node programs").
 */
export const NODE_PRELOAD_IN_SANDBOX = '/.tarmac/lib/node-proxy.cjs';

/**
 * The proxy URL with the sandbox's own credentials in it (proxy-auth.ts): every proxy-aware
 * client sends them as Proxy-Authorization. They are the sandbox's, visible to its processes by
 * design; they prove nothing but "this sandbox" and open nothing but its own policy.
 */
export function proxyUrlFor(proxyUrl: string, credentials: { user: string; password: string }): string {
  const url = new URL(proxyUrl);
  url.username = encodeURIComponent(credentials.user);
  url.password = encodeURIComponent(credentials.password);
  return url.href.replace(/\/$/, '');
}

export function egressSandboxDefaults(
  proxyUrl: string,
  ca: Pick<EgressCaFiles, 'certPath' | 'bundlePath'>,
): { env: Record<string, string>; files: HostFile[] } {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    env: {
      HTTP_PROXY: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      http_proxy: proxyUrl,
      https_proxy: proxyUrl,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
      NODE_EXTRA_CA_CERTS: CA_IN_SANDBOX,
      NODE_OPTIONS: `--require ${NODE_PRELOAD_IN_SANDBOX}`,
      SSL_CERT_FILE: SYSTEM_BUNDLE_IN_SANDBOX,
      REQUESTS_CA_BUNDLE: SYSTEM_BUNDLE_IN_SANDBOX,
      CURL_CA_BUNDLE: SYSTEM_BUNDLE_IN_SANDBOX,
      PIP_CERT: SYSTEM_BUNDLE_IN_SANDBOX,
    },
    files: [
      { hostPath: ca.bundlePath, containerPath: SYSTEM_BUNDLE_IN_SANDBOX },
      { hostPath: ca.certPath, containerPath: CA_IN_SANDBOX },
    ],
  };
}
