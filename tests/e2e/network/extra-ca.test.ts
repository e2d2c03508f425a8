// Extra CAs behind a TLS-inspecting proxy (issue 14 item 10): one operator setting,
// TARMAC_EXTRA_CA_CERTS, reaches the egress proxy's upstream verification and every sandbox's
// trust stores. "The outside" is an HTTPS server in a namespace of this test's own (10.157.0.0/24)
// whose certificate comes from a CA made here with openssl, standing in for the corporate proxy's.
// Where TLS is checked: a passed-through HTTPS destination is a CONNECT tunnel, so the sandbox's
// own client verifies (system bundle, NODE_EXTRA_CA_CERTS); a routed one is terminated by the
// proxy, which verifies the upstream itself. With the CA in the setting all three succeed; with
// `none`, all three fail verification.
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
const outside: Namespace = {
  name: 'tmi14-ca-out',
  hostIf: 'tmi14ca0',
  hostIp: '10.157.0.1',
  nsIp: '10.157.0.2',
};
const NETWORK = { TARMAC_BRIDGE: 'tarmaci14c', TARMAC_SUBNET: '10.158.0.0/16' };
const SUPPORT = join(import.meta.dirname, 'support');
const NAME = 'extra-ca';
const POLICY = {
  proxy: {
    allowedDomains: ['*.i14.test'],
    routing: [{ destinations: ['routed.i14.test'], headers: { 'x-i14-routed': 'yes' } }],
  },
};
/** Node's fetch in the sandbox (through the platform's preload and NODE_EXTRA_CA_CERTS). */
const NODE_FETCH = `node -e 'fetch(process.argv[1]).then(async (r) => console.log("status " + r.status), (e) => console.log("error " + (e.cause?.code ?? e.cause?.message ?? e)))' https://tls.i14.test/node`;

describe.skipIf(missing !== null)(`extra CAs${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let dir = '';
  let certs: OutsideCerts;
  let server: ChildProcess | undefined;
  let p: RunningPlatform | undefined;

  async function start(extraCaCerts: string): Promise<RunningPlatform> {
    const o = outside.nsIp;
    p = await startSandboxPlatform({
      env: {
        ...NETWORK,
        TARMAC_EGRESS_RESOLVE: `tls.i14.test=${o},routed.i14.test=${o}`,
        TARMAC_EXTRA_CA_CERTS: extraCaCerts,
      },
    });
    await createSandbox(p, NAME, { network: POLICY }, { memory: 256 });
    return p;
  }

  async function stop(): Promise<void> {
    await cleanUp(p, [NAME]);
    p = undefined;
  }

  /** curl with only what the platform set up: exit code, HTTP status and stderr. */
  async function curl(url: string) {
    const r = await exec(p!, NAME, `curl -sS -m 10 -o /dev/null -w '%{http_code}' '${url}'`);
    return { exit: r.exitCode, status: Number(r.stdout ?? '0'), stderr: r.stderr ?? '' };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-extra-ca-'));
    certs = makeOutsideCerts(dir, ['tls.i14.test', 'routed.i14.test']);
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
  }, 60_000);

  afterAll(async () => {
    await stop();
    server?.kill('SIGKILL');
    removeNamespace(outside);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it(
    'with the CA in TARMAC_EXTRA_CA_CERTS: curl, node and the proxy trust the server',
    async () => {
      await start(certs.caFile);
      const bundle = await exec(p!, NAME, 'grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt');
      expect(Number(bundle.stdout)).toBeGreaterThan(100); // the system roots are still there
      const tunnelled = await curl('https://tls.i14.test/curl');
      expect(tunnelled, tunnelled.stderr).toMatchObject({ exit: 0, status: 200 });
      const node = await exec(p!, NAME, NODE_FETCH);
      expect(node.stdout?.trim(), node.stderr ?? '').toBe('status 200');
      // Routed: the proxy terminates TLS and verifies the upstream with the extra CA.
      const routed = await curl('https://routed.i14.test/routed');
      expect(routed, routed.stderr).toMatchObject({ exit: 0, status: 200 });
      const seen = (await (await fetch(`http://${outside.nsIp}:8081/`)).json()) as {
        url: string;
        headers: Record<string, string>;
      }[];
      expect(seen.find((r) => r.url === '/routed')?.headers['x-i14-routed']).toBe('yes');
      await stop();
    },
    15 * 60_000,
  );

  it(
    'without it (`none`): every client refuses the server certificate',
    async () => {
      await start('none');
      const tunnelled = await curl('https://tls.i14.test/curl-untrusted');
      expect(tunnelled.exit).toBe(60); // CURLE_PEER_FAILED_VERIFICATION
      const node = await exec(p!, NAME, NODE_FETCH);
      expect(node.stdout?.trim()).toMatch(/^error (UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify)/);
      // The proxy refuses to forward to an upstream it cannot verify: 502 from the proxy.
      const routed = await curl('https://routed.i14.test/routed-untrusted');
      expect(routed.status).toBe(502);
      await stop();
    },
    15 * 60_000,
  );
});
