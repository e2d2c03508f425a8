// The build network (issue 15 "Builds": RUN steps may reach the package registries this machine
// reaches), attacked with real buildah builds on the real platform: a build step reaches a
// "public" upstream (HTTP and HTTPS, the HTTPS one trusted through the operator's CA) only through
// the build proxy, and cannot reach the platform's port, a host loopback listener, the host's own
// address, the metadata address, the sandbox bridge or a private address — neither through the
// proxy nor around it. The public and private upstreams are namespaces of this test (no internet):
// the "public" one at 198.51.100.182 (a documentation range, so no real host is shadowed; not one
// of the ranges builds refuse), the "private" one at 10.182.0.2.
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import { freePort, removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';
import { IMAGE_CACHE, missingBuildCapability, missingCapability } from '../sandboxes/support.js';
import { makeOutsideCerts } from '../network/support/certs.js';
import {
  createNamespace,
  netnsUnavailable,
  removeNamespace,
  startIn,
  type Namespace,
} from '../network/support/netns.js';
import { buildStatus } from './build-status.js';
import { removeRunWorkloads } from '../support/run-workloads.js';

const missing = (): string | null => missingCapability() ?? netnsUnavailable() ?? missingBuildCapability();
const skip = missing();
const BUILD_MS = 6 * 60_000;
const SUBNET = '10.180.0.0/16';
const GATEWAY = '10.180.0.1';
/** Claimed for the private upstream's veth (subnets.test.ts: one /16 per test file). */
const PRIVATE_RANGE = '10.182.0.0/16';
const publicNs: Namespace = {
  name: 'tmb2-pub',
  hostIf: 'tmb2p0',
  hostIp: '198.51.100.181',
  nsIp: '198.51.100.182',
};
const privateNs: Namespace = {
  name: 'tmb2-priv',
  hostIf: 'tmb2v0',
  hostIp: PRIVATE_RANGE.replace('0.0/16', '0.1'),
  nsIp: PRIVATE_RANGE.replace('0.0/16', '0.2'),
};
const SUPPORT = join(import.meta.dirname, '../network/support');

/** A probe prints `PROBE <name> rc=<curl exit> code=<http code> connect=<CONNECT answer>`. */
const PROBE_SH = `#!/bin/sh
name=$1; shift
rm -f /tmp/probe-body /tmp/probe-err
out=$(curl -sS -m 5 -o /tmp/probe-body -w '%{http_code} %{http_connect}' "$@" 2>/tmp/probe-err)
rc=$?
echo "PROBE $name rc=$rc code=\${out% *} connect=\${out#* } body=$(head -c 120 /tmp/probe-body 2>/dev/null | tr -d '\\n') err=$(head -c 160 /tmp/probe-err | tr -d '\\n')"
`;

describe.skipIf(skip !== null)(`build network${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let loopback: Server;
  let loopbackPort = 0;
  let hostAddress = '';
  const work = mkdtempSync(join(tmpdir(), 'b2-net-'));
  const servers: ChildProcess[] = [];
  let workspaceId = '';

  beforeAll(async () => {
    const certs = makeOutsideCerts(work, ['pkgs.public.test']);
    for (const ns of [publicNs, privateNs]) {
      createNamespace(ns);
      servers.push(
        await startIn(ns.name, process.execPath, [
          join(SUPPORT, 'outside-server.mjs'),
          JSON.stringify({
            bind: ns.nsIp,
            httpPort: 80,
            httpsPort: 443,
            badHttpsPort: 8443,
            tcpPort: 7000,
            controlPort: 8081,
            ...certs,
          }),
        ]),
      );
    }
    // A host loopback service a tenant must not reach (the database, the platform's own ports).
    loopback = createServer((_req, res) => res.end('loopback-secret'));
    loopbackPort = await freePort();
    await new Promise<void>((r) => loopback.listen(loopbackPort, '127.0.0.1', r));
    hostAddress =
      Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal && !a.address.startsWith('10.'))?.address ?? '';
    p = await startPlatform({
      timeoutMs: 15 * 60_000,
      env: {
        TARMAC_IMAGE_DIR: IMAGE_CACHE,
        TARMAC_BRIDGE: 'tarmacbd1',
        TARMAC_SUBNET: SUBNET,
        // The default, named so the test says what it tests.
        TARMAC_BUILD_NETWORK: 'egress',
        TARMAC_EGRESS_RESOLVE: `pkgs.public.test=${publicNs.nsIp},private.test=${privateNs.nsIp}`,
        // The operator's CA: trusted inside build steps (the upstream's certificate is signed by it).
        NODE_EXTRA_CA_CERTS: certs.caFile,
      },
    });
    const ws = (await (await p.api(`/v0/workspaces/${p.credentials.workspace}`)).json()) as { id?: string };
    workspaceId = ws.id ?? '';
  }, 15 * 60_000);

  afterAll(async () => {
    // Built agents and functions have replicas now (issue 16); they outlive a stop by design.
    if (p) await removeRunWorkloads(p).catch((err: unknown) => console.error(err));
    await p?.stop();
    loopback?.close();
    for (const s of servers) s.kill('SIGKILL');
    for (const ns of [publicNs, privateNs]) removeNamespace(ns);
    if (workspaceId) {
      for (const d of readdirSync(IMAGE_CACHE)) {
        if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`))
          rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
      }
    }
    if (p) removeHome(p.home);
    rmSync(work, { recursive: true, force: true });
  }, 300_000);

  async function build(
    name: string,
    dockerfile: string,
  ): Promise<{ status: string; log: string; message: string }> {
    const res = await p.api('/v0/agents?upload=true', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name }, spec: {} }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const url = res.headers.get('x-service-upload-url')!;
    const zip = zipOf([
      { name: 'Dockerfile', data: dockerfile },
      { name: 'probe.sh', data: PROBE_SH },
    ]);
    const up = await fetch(url, { method: 'PUT', body: zip, headers: { 'content-type': 'application/zip' } });
    expect(up.status, await up.clone().text()).toBe(200);
    const deadline = Date.now() + BUILD_MS;
    for (;;) {
      const r = (await (await p.api(`/v0/agents/${name}`)).json()) as {
        status: string;
        events: Array<{ type?: string; status: string; message: string }>;
      };
      const built = buildStatus(r);
      if (built === 'BUILT' || built === 'FAILED') {
        const log = await (await p.api(`/v0/agents/${name}/logs`)).text();
        const message = r.events.filter((e) => e.type === 'build').at(-1)?.message ?? '';
        return { status: built, log, message };
      }
      if (Date.now() > deadline) throw new Error(`${name} still ${r.status}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  function probes(log: string): Record<string, { rc: number; code: string; connect: string; line: string }> {
    const out: Record<string, { rc: number; code: string; connect: string; line: string }> = {};
    for (const line of log.split('\n')) {
      const m = /^PROBE (\S+) rc=(\d+) code=(\d*) connect=(\d*)/.exec(line);
      if (m) out[m[1]!] = { rc: Number(m[2]), code: m[3]!, connect: m[4]!, line };
    }
    return out;
  }

  it(
    'RUN steps reach a public upstream through the build proxy, and nothing internal',
    async () => {
      const platform = `${GATEWAY}:${p.port}`;
      const viaProxy = 'env -u NO_PROXY -u no_proxy'; // loopback literals go to the proxy too
      const steps = [
        'public-http http://pkgs.public.test/pkg.tgz',
        'public-https https://pkgs.public.test/simple/',
        `public-direct --noproxy * http://${publicNs.nsIp}/`,
        `private-ip http://${privateNs.nsIp}/`,
        'private-name https://private.test/',
        `loopback-listener-proxied http://127.0.0.1:${loopbackPort}/`,
        `loopback-listener-direct http://127.0.0.1:${loopbackPort}/`,
        `platform-proxied http://127.0.0.1:${p.port}/health`,
        `platform-gateway-proxied http://${platform}/health`,
        `platform-gateway-direct --noproxy * http://${platform}/health`,
        ...(hostAddress ? [`host-address-proxied http://${hostAddress}:${p.port}/health`] : []),
        'metadata http://169.254.169.254/latest/meta-data/',
      ];
      const dockerfile = [
        'FROM tarmac/base:latest',
        'COPY probe.sh /probe.sh',
        ...steps.map((s) => {
          const [name, ...args] = s.split(' ');
          const env =
            name!.startsWith('loopback-listener-proxied') || name === 'platform-proxied' ? viaProxy : '';
          return `RUN ${env} sh /probe.sh ${name} ${args.map((a) => `'${a}'`).join(' ')}`;
        }),
        "RUN env | grep -c '^https_proxy=http://build-' > /proxy-vars-in-step",
        '',
      ].join('\n');
      const r = await build('net-probes', dockerfile);
      expect(r.status, r.message).toBe('BUILT');
      const seen = probes(r.log);
      const ok = (n: string) => expect(seen[n], r.log).toMatchObject({ rc: 0, code: '200' });
      ok('public-http');
      ok('public-https');
      expect(seen['public-http']?.line).toContain('"scheme":"http"');
      expect(seen['public-https']?.line).toContain('"scheme":"https"');
      // No route around the proxy.
      expect(seen['public-direct']?.rc, r.log).not.toBe(0);
      // Refused by the proxy with 403: plain HTTP answers it, CONNECT fails with it.
      for (const n of [
        'private-ip',
        'loopback-listener-proxied',
        'platform-proxied',
        'platform-gateway-proxied',
        'metadata',
        ...(hostAddress ? ['host-address-proxied'] : []),
      ])
        expect(seen[n], `${n}\n${r.log}`).toMatchObject({ code: '403' });
      expect(seen['private-name'], r.log).toMatchObject({ connect: '403' });
      expect(seen['private-name']?.rc).not.toBe(0);
      // Straight at the host: the step's loopback is its own, the gateway drops the platform's port.
      for (const n of ['loopback-listener-direct', 'platform-gateway-direct']) {
        expect(seen[n]?.rc, `${n}\n${r.log}`).not.toBe(0);
        expect(seen[n]?.line).not.toContain('loopback-secret');
      }
      expect(r.log).not.toContain('loopback-secret');
      // The proxy password is masked in the log, and no proxy variable is in the image.
      expect(r.log).not.toMatch(/build-[0-9a-f]{10}:[A-Za-z0-9_-]{20,}@/);
      const image = (await (await p.api('/v0/agents/net-probes')).json()) as {
        spec: { runtime: { image: string } };
      };
      const stored = join(IMAGE_CACHE, encodeURIComponent(`ws-${workspaceId}/${image.spec.runtime.image}`));
      const config = readFileSync(join(stored, 'image.json'), 'utf8');
      expect(config.toLowerCase()).not.toContain('proxy');
      // The step saw the variables (it wrote 1): the image's layers, shared ones in the store's .layers/.
      const layers = (JSON.parse(config) as { layers: string[] }).layers.map((l) => join(stored, l));
      const marker = layers.map((l) => join(l, 'proxy-vars-in-step')).find((f) => existsSync(f));
      expect(marker, layers.join('\n')).toBeDefined();
      expect(readFileSync(marker!, 'utf8').trim()).toBe('1');
      // The build's namespace is gone with the build.
      const left = readdirSync(join(p.home, 'egress', 'build-netns'));
      expect(left).toEqual([]);
      const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
      expect(netns).not.toMatch(/tarmac-build-/);
    },
    BUILD_MS,
  );

  it(
    'a RUN that needs a private address fails the build with the proxy refusal in the message',
    async () => {
      const r = await build(
        'net-private',
        `FROM tarmac/base:latest\nRUN curl -fsS -m 5 http://${privateNs.nsIp}/index # fetch-private\n`,
      );
      expect(r.status).toBe('FAILED');
      expect(r.message).toContain('fetch-private');
      expect(r.message).toMatch(/403/);
    },
    BUILD_MS,
  );

  it(
    'a Dockerfile that runs nothing gets no network; an ADD of a private URL still goes through the proxy',
    async () => {
      // No RUN, ADD or ONBUILD, FROM the base image only: built with --network=none, no namespace.
      const quiet = await build('net-none', 'FROM tarmac/base:latest\nENV NET_NONE=1\nENV NET_NONE_TOO=1\n');
      expect(quiet.status, quiet.message).toBe('BUILT');
      expect(quiet.log).toContain('without a network');
      // Its first steps again: the last one now comes from the layer cache (buildah 1.28 calls that
      // an error when the image goes to an OCI layout; the whole layout is taken, buildah.ts).
      const again = await build('net-none-again', 'FROM tarmac/base:latest\nENV NET_NONE=1\n');
      expect(again.status, again.log).toBe('BUILT');
      expect(again.log).toContain('the image is in the layout');
      // ADD fetches in buildah itself: it must still get the build's proxy (and its refusal), never
      // the host's own network, where the private upstream answers.
      const add = await build(
        'net-add',
        `FROM tarmac/base:latest\nADD http://${privateNs.nsIp}/index /index\nCOPY probe.sh /probe.sh\n`,
      );
      expect(add.status, add.log).toBe('FAILED');
      expect(add.log).not.toContain('without a network');
      // Refused by the build proxy: 407, as the fetch comes from buildah on the host, not from the
      // build's namespace (the proxy checks the source address with the password), or 403.
      expect(add.message, add.log).toMatch(/invalid response status 40[37]/);
    },
    BUILD_MS,
  );

  it('the build namespaces leave nothing behind on the host', () => {
    expect(existsSync(join(p.home, 'egress', 'build-netns'))).toBe(true);
    expect(readdirSync(join(p.home, 'egress', 'build-netns'))).toEqual([]);
  });
});
