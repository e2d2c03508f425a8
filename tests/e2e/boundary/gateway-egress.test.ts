// Issue 19 items 3, 4, 11 and 12 on the real platform with real sandboxes, each attack performed:
//  - item 3: sandboxd at <sandbox ip>:8080 called straight from the host, without and with a wrong
//    token → 401 and no command runs; the egress proxy asked without credentials, with another
//    sandbox's id, with a wrong password or a forwarded-for header → 407, nothing leaves;
//  - item 4: a sandbox asks the proxy for every address of this host, in every notation, plain
//    HTTP and CONNECT, for a host service listening on [::] (dual stack) → 403, and the service
//    sees no connection;
//  - item 11: a public preview of port 443 → 400 naming spec.port;
//  - item 12: workspace `team` + sandbox `x-ai` and workspace `ai-team` + sandbox `x` each reach
//    their own sandbox at their metadata.url.
// Network: our own bridge (tarmacgwe0, 10.246.0.0/16), a namespace of our own as "the outside"
// (10.247.0.0/24), an empty bridge of our own (tmgwbr1, 10.248.0.1/24) standing for another
// platform's bridge, and the host's own addresses (local delivery only).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  json,
  missingCapability,
  startSandboxPlatform,
  type SandboxView,
} from '../sandboxes/support.js';
import {
  createNamespace,
  netnsUnavailable,
  removeNamespace,
  startIn,
  type Namespace,
} from '../network/support/netns.js';

const missing = missingCapability() ?? netnsUnavailable() ?? null;
const NETWORK = { TARMAC_BRIDGE: 'tarmacgwe0', TARMAC_SUBNET: '10.246.0.0/16' };
const GATEWAY = '10.246.0.1';
const OTHER_BRIDGE = { name: 'tmgwbr1', address: '10.248.0.1', cidr: '10.248.0.1/24', behind: '10.248.0.2' };
const outside: Namespace = { name: 'tmgw-out', hostIf: 'tmgwo0', hostIp: '10.247.0.1', nsIp: '10.247.0.2' };
const PROBE = 'probe';
const WS_TEAM = 'team';
const WS_AI_TEAM = 'ai-team';
const B_SECRET = 'sk_b_only_7f3c9a1e5d2b';
const B_NETWORK = {
  proxy: {
    routing: [
      {
        destinations: ['outside.test'],
        headers: { 'X-Api-Key': '{{SECRET:key}}' },
        secrets: { key: B_SECRET },
      },
    ],
  },
};

function removeBridge(): void {
  try {
    execFileSync('ip', ['link', 'del', OTHER_BRIDGE.name], { stdio: 'ignore' });
  } catch {
    // not there
  }
}

/**
 * Runs in the sandbox with its node: raw proxy requests (so no client normalizes the target), one
 * per line of output `<status>`. `auth`: 'own' (from HTTPS_PROXY), 'none', or a Basic value.
 */
const PROBE_SCRIPT = `
const net = require('net');
const [spec] = process.argv.slice(2).map((a) => JSON.parse(a));
const proxy = new URL(process.env.HTTPS_PROXY);
const own = 'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64');
function one(t) {
  return new Promise((resolve) => {
    const s = net.connect(Number(proxy.port), proxy.hostname);
    let got = '';
    const auth = t.auth === undefined || t.auth === 'own' ? own : t.auth === 'none' ? undefined : t.auth;
    const head = t.mode === 'connect'
      ? 'CONNECT ' + t.target + ' HTTP/1.1\\r\\nHost: ' + t.target + '\\r\\n'
      : 'GET ' + t.target + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n';
    const extra = Object.entries(t.headers || {}).map(([k, v]) => k + ': ' + v + '\\r\\n').join('');
    s.write(head + (auth ? 'Proxy-Authorization: ' + auth + '\\r\\n' : '') + extra + '\\r\\n');
    s.on('data', (d) => { got += d; if (got.includes('\\r\\n')) { s.destroy(); } });
    const timer = setTimeout(() => s.destroy(), 8000);
    s.on('close', () => { clearTimeout(timer); resolve((/^HTTP\\/1\\.1 (\\d+)/.exec(got) || [0, 0])[1]); });
    s.on('error', () => resolve(0));
  });
}
(async () => { for (const t of spec) console.log(t.label + ' ' + (await one(t))); })();
`;

describe.skipIf(missing !== null)(
  `gateway and egress boundary${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    let hostService: Server;
    let hostPort = 0;
    const hostConnections: string[] = [];
    let outsideServer: ChildProcess | undefined;
    let outsideHits = 0;
    let outsideLog = '';
    let probeIp = '';
    /**
     * The addresses of the default-route interface (eth0): the host's own, stable while other
     * helpers' bridges come and go (a vanished address would no longer be the host's, and a probe
     * of it could leave the machine). Our own bridge, link and loopback are added by the test.
     */
    const uplink = (family: 'IPv4' | 'IPv6'): string[] => {
      const route = JSON.parse(
        execFileSync('ip', ['-j', 'route', 'show', 'default'], { encoding: 'utf8' }),
      ) as {
        dev?: string;
      }[];
      const dev = route[0]?.dev;
      return ((dev && networkInterfaces()[dev]) || [])
        .filter((i) => i.family === family)
        .map((i) => i.address.split('%')[0]!);
    };
    const hostV4 = () => uplink('IPv4');
    const hostV6 = () => uplink('IPv6');

    async function probe(
      targets: {
        label: string;
        mode: 'connect' | 'http';
        target: string;
        auth?: string;
        headers?: Record<string, string>;
      }[],
    ) {
      const b64 = Buffer.from(PROBE_SCRIPT).toString('base64');
      const arg = JSON.stringify(targets).replaceAll("'", "'\\''");
      const r = await exec(
        p!,
        PROBE,
        `echo ${b64} | base64 -d > /tmp/probe.js && node /tmp/probe.js '${arg}'`,
      );
      const out: Record<string, number> = {};
      for (const line of (r.stdout ?? '').trim().split('\n')) {
        const i = line.lastIndexOf(' ');
        out[line.slice(0, i)] = Number(line.slice(i + 1));
      }
      expect(Object.keys(out), r.stderr ?? '').toHaveLength(targets.length);
      return out;
    }

    async function inWorkspace(ws: string, path: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      headers.set('x-service-workspace', ws);
      return p!.api(path, { ...init, headers });
    }

    beforeAll(async () => {
      hostService = createServer((s) => {
        hostConnections.push(`${s.remoteAddress}`);
        s.destroy();
      });
      hostPort = await freePort();
      await new Promise<void>((r) => hostService.listen({ port: hostPort, host: '::', ipv6Only: false }, r));
      removeBridge();
      execFileSync('ip', ['link', 'add', OTHER_BRIDGE.name, 'type', 'bridge']);
      execFileSync('ip', ['addr', 'add', OTHER_BRIDGE.cidr, 'dev', OTHER_BRIDGE.name]);
      execFileSync('ip', ['link', 'set', OTHER_BRIDGE.name, 'up']);
      createNamespace(outside);
      outsideServer = await startIn(outside.name, process.execPath, [
        '-e',
        `require('http').createServer((q, s) => { console.log('hit ' + q.url + ' ' + JSON.stringify(q.headers)); s.end('outside'); }).listen(80, '${outside.nsIp}', () => console.log('ready'))`,
      ]);
      outsideServer.stdout?.on('data', (d: Buffer) => {
        outsideHits += (String(d).match(/hit /g) ?? []).length;
        outsideLog += String(d);
      });
      const eth = hostV4()[0] ?? '127.0.0.1';
      p = await startSandboxPlatform({
        env: {
          ...NETWORK,
          TARMAC_EGRESS_RESOLVE: `outside.test=${outside.nsIp},rebind.test=${eth},mapped.test=::ffff:${eth}`,
        },
      });
      await createSandbox(p, PROBE, {}, { memory: 256 });
      const ifs = await exec(p, PROBE, `node -p "JSON.stringify(require('os').networkInterfaces())"`);
      probeIp = Object.values(
        JSON.parse(ifs.stdout ?? '{}') as Record<
          string,
          { family: string; address: string; internal: boolean }[]
        >,
      )
        .flat()
        .find((i) => i.family === 'IPv4' && !i.internal)!.address;
    }, 15 * 60_000);

    afterAll(async () => {
      try {
        // Several workspaces by now, so each delete names its own (cleanUp's own delete does not).
        const all = p
          ? ([
              [WS_TEAM, 'x-ai'],
              [WS_AI_TEAM, 'x'],
              [p.credentials.workspace, PROBE],
            ] as const)
          : [];
        for (const [ws, name] of all) {
          const res = await inWorkspace(ws, `/v0/sandboxes/${name}`, { method: 'DELETE' }).catch(
            () => undefined,
          );
          if (res?.status !== 200) continue;
          for (let i = 0; i < 600; i++) {
            const s = await inWorkspace(ws, `/v0/sandboxes/${name}`);
            if (s.status === 404 || (await json<SandboxView>(s)).status === 'TERMINATED') break;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        await cleanUp(p, [PROBE]);
      } finally {
        hostService?.close();
        outsideServer?.kill('SIGKILL');
        removeNamespace(outside);
        removeBridge();
      }
    }, 180_000);

    it('item 3: sandboxd on <sandbox ip>:8080 answers nothing but /health status to a caller without its token', async () => {
      expect(probeIp).toMatch(/^10\.246\./);
      const run = (headers: Record<string, string>) =>
        fetch(`http://${probeIp}:8080/process`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ command: 'touch /tmp/pwned', waitForCompletion: true }),
          signal: AbortSignal.timeout(5000),
        });
      for (const headers of [
        {},
        { 'x-tarmac-sandbox-token': 'f'.repeat(64) },
        { authorization: `Bearer ${p!.credentials.apiKey}` },
      ]) {
        const res = await run(headers as Record<string, string>);
        expect(res.status).toBe(401);
      }
      // The terminal WebSocket: a raw upgrade, as a browser would send it.
      const upgrade = await new Promise<string>((resolve) => {
        const s = connect(8080, probeIp);
        let got = '';
        s.on('connect', () =>
          s.write(
            'GET /terminal/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
              'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
          ),
        );
        s.on('data', (d: Buffer) => (got += String(d)));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        setTimeout(() => s.destroy(), 5000);
      });
      expect(upgrade).toMatch(/^HTTP\/1\.1 401/);
      expect(await (await fetch(`http://${probeIp}:8080/health`)).json()).toEqual({ status: 'ok' });
      // Through the gateway (which holds the token) the sandbox works, and nothing ran above.
      const check = await exec(
        p!,
        PROBE,
        'test -e /tmp/pwned && echo yes || echo no; printf "[%s]" "$TARMAC_SANDBOXD_TOKEN"',
      );
      expect(check.stdout).toBe('no\n[]'); // and user processes do not see sandboxd's token
    });

    it('item 3: the egress proxy answers 407 to missing or wrong credentials, and lets the own ones through', async () => {
      const basic = (u: string, pw: string) => `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}`;
      const proxyUrl = new URL((await exec(p!, PROBE, 'printf %s "$HTTPS_PROXY"')).stdout ?? '');
      const ownId = decodeURIComponent(proxyUrl.username);
      const ownPw = decodeURIComponent(proxyUrl.password);
      expect(proxyUrl.host).toMatch(new RegExp(`^${GATEWAY.replaceAll('.', '\\.')}:\\d+$`));
      expect(ownPw).toMatch(/^[0-9a-f]{64}$/);
      const target = 'http://outside.test/gw-e2e';
      const before = outsideHits;
      const got = await probe([
        { label: 'none', mode: 'http', target, auth: 'none' },
        {
          label: 'none-forwarded',
          mode: 'http',
          target,
          auth: 'none',
          headers: { 'x-forwarded-for': probeIp, forwarded: `for=${probeIp}` },
        },
        { label: 'wrong-password', mode: 'http', target, auth: basic(ownId, 'f'.repeat(64)) },
        {
          label: 'other-id-own-password',
          mode: 'http',
          target,
          auth: basic('another-sandbox-record', ownPw),
        },
        { label: 'connect-none', mode: 'connect', target: 'outside.test:80', auth: 'none' },
        { label: 'connect-wrong', mode: 'connect', target: 'outside.test:80', auth: basic(ownId, 'x') },
        { label: 'own', mode: 'http', target },
      ]);
      expect(got).toEqual({
        none: 407,
        'none-forwarded': 407,
        'wrong-password': 407,
        'other-id-own-password': 407,
        'connect-none': 407,
        'connect-wrong': 407,
        own: 200,
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(outsideHits - before).toBe(1); // only the request with the sandbox's own credentials
      // From the host (not a sandbox at all), even with the sandbox's own credentials: 407.
      const fromHost = execFileSync(
        'curl',
        ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '-x', proxyUrl.href, target],
        {
          encoding: 'utf8',
        },
      );
      expect(fromHost).toBe('407');
    });

    it("item 3: the image's proxy clients send the credentials of HTTP(S)_PROXY: curl, python, apt, git", async () => {
      const hit = (marker: string) => outsideLog.includes(marker);
      const r = await exec(
        p!,
        PROBE,
        [
          "curl -sS -m 10 -o /dev/null -w 'curl=%{http_code}\\n' http://outside.test/creds-curl",
          `python3 -c "import urllib.request as u; print('python=' + str(u.urlopen('http://outside.test/creds-python').status))"`,
          "printf 'deb [trusted=yes] http://outside.test/creds-apt bookworm main\\n' > /tmp/tm.list",
          'apt-get -q -o Dir::Etc::sourcelist=/tmp/tm.list -o Dir::Etc::sourceparts=- -o Acquire::Retries=0 update > /dev/null 2>&1; echo apt=$?',
          'git ls-remote http://outside.test/creds-git.git > /dev/null 2>&1; echo git=$?',
        ].join('; '),
      );
      expect(r.stdout).toContain('curl=200');
      expect(r.stdout).toContain('python=200');
      await new Promise((res) => setTimeout(res, 200));
      // apt and git fail on the outside's answer ("outside" is no repository), but they asked it:
      // past the proxy's 407, so they sent the sandbox's credentials.
      expect([hit('/creds-curl'), hit('/creds-python'), hit('/creds-apt/'), hit('/creds-git.git/')]).toEqual([
        true,
        true,
        true,
        true,
      ]);
    });

    it('item 4: every notation of every host address is refused (403) and the host service sees nothing', async () => {
      const port = hostPort;
      const v4 = [...hostV4(), GATEWAY, OTHER_BRIDGE.address, outside.hostIp, '127.0.0.1', '0.0.0.0'];
      const v6 = [...hostV6(), '::1', '::'];
      const eth = hostV4()[0]!;
      const int = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
      const hex = (a: string) => a.split('.').map((o) => Number(o).toString(16).padStart(2, '0'));
      const targets: string[] = [];
      for (const a of new Set(v4)) {
        const h = hex(a);
        targets.push(
          a,
          String(int(a)), // decimal integer
          `0${int(a).toString(8)}`, // octal integer
          `0x${int(a).toString(16)}`, // hex integer
          a
            .split('.')
            .map((o) => `0${Number(o).toString(8)}`)
            .join('.'), // dotted octal
          `[::ffff:${a}]`, // IPv4-mapped
          `[::ffff:${h[0]}${h[1]}:${h[2]}${h[3]}]`, // IPv4-mapped, hex
          `[::${a}]`, // IPv4-compatible
          `[64:ff9b::${a}]`, // NAT64 well-known prefix
        );
      }
      for (const a of new Set(v6)) targets.push(`[${a}]`);
      targets.push(
        OTHER_BRIDGE.behind,
        'localhost',
        'rebind.test',
        'mapped.test',
        `[2002:${hex(eth)[0]}${hex(eth)[1]}:${hex(eth)[2]}${hex(eth)[3]}::1]`,
      );
      const spec = targets.flatMap((t) => [
        { label: `http ${t}`, mode: 'http' as const, target: `http://${t}:${port}/` },
        { label: `connect ${t}`, mode: 'connect' as const, target: `${t}:${port}` },
      ]);
      // The service is there: from the host, its own address reaches it.
      await new Promise<void>((resolve, reject) => {
        const s = connect(port, eth);
        s.once('connect', () => {
          s.destroy();
          resolve();
        });
        s.once('error', reject);
      });
      await new Promise((r) => setTimeout(r, 100));
      hostConnections.length = 0;
      const got = await probe(spec);
      const notRefused = Object.entries(got).filter(([, status]) => status !== 403);
      expect(notRefused).toEqual([]);
      await new Promise((r) => setTimeout(r, 200));
      expect(hostConnections).toEqual([]);
      // The outside is still reachable the same way (the guard refuses the host, not everything).
      expect(await probe([{ label: 'outside', mode: 'connect', target: `${outside.nsIp}:80` }])).toEqual({
        outside: 200,
      });
    });

    it('item 11: a public preview of port 443 (the sandbox API) is refused with 400 naming spec.port', async () => {
      const res = await p!.api(`/v0/sandboxes/${PROBE}/previews`, {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'api' }, spec: { port: 443, public: true } }),
      });
      const body = await json<{ message: string }>(res);
      expect(res.status).toBe(400);
      expect(body.message).toMatch(/^spec\.port: /);
      expect((await p!.api(`/v0/sandboxes/${PROBE}/previews/api`)).status).toBe(404);
    });

    it('item 12: team/x-ai and ai-team/x each reach their own sandbox at their metadata.url', async () => {
      for (const ws of [WS_TEAM, WS_AI_TEAM]) {
        const res = await p!.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: ws }) });
        expect(res.status, await res.clone().text()).toBe(200);
      }
      const urls: Record<string, string> = {};
      for (const [ws, name] of [
        [WS_TEAM, 'x-ai'],
        [WS_AI_TEAM, 'x'],
      ] as const) {
        const res = await inWorkspace(ws, '/v0/sandboxes', {
          method: 'POST',
          body: JSON.stringify({
            metadata: { name },
            spec: {
              runtime: { image: 'blaxel/base-image:latest', memory: 256 },
              // B's routing secret, which no other sandbox may get injected (item 3).
              ...(name === 'x-ai' ? { network: B_NETWORK } : {}),
            },
          }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        for (let i = 0; ; i++) {
          const s = await json<SandboxView>(await inWorkspace(ws, `/v0/sandboxes/${name}`));
          if (s.status === 'DEPLOYED') {
            urls[`${ws}/${name}`] = s.metadata.url!;
            break;
          }
          expect(s.status).not.toBe('FAILED');
          expect(i).toBeLessThan(600);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const teamHost = new URL(urls[`${WS_TEAM}/x-ai`]!).hostname;
      const aiHost = new URL(urls[`${WS_AI_TEAM}/x`]!).hostname;
      expect(teamHost).not.toBe(aiHost);
      expect(teamHost.split('.')[0]).toBe('sbx-x--ai-team');
      expect(aiHost.split('.')[0]).toBe('sbx-x-ai-team');
      const hostnameVia = async (host: string): Promise<string> => {
        const out = execFileSync(
          'curl',
          [
            '-sS',
            '-m',
            '20',
            '--resolve',
            `${host}:${p!.port}:127.0.0.1`,
            '-H',
            `authorization: Bearer ${p!.credentials.apiKey}`,
            '-H',
            'content-type: application/json',
            '-d',
            JSON.stringify({ command: 'hostname', waitForCompletion: true }),
            `http://${host}:${p!.port}/process`,
          ],
          { encoding: 'utf8' },
        );
        return ((JSON.parse(out) as { stdout?: string }).stdout ?? out).trim();
      };
      expect(await hostnameVia(teamHost)).toBe('x-ai');
      expect(await hostnameVia(aiHost)).toBe('x');
    });

    it("item 3: sandbox A naming sandbox B (B's id, even B's real password) gets neither B's policy nor B's secret", async () => {
      // B is team/x-ai (created above with a routing rule that injects B_SECRET).
      const bExec = await fetch(`${p!.url}/${WS_TEAM}/sandboxes/x-ai/process`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p!.credentials.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          command: `printf '%s\\n' "$HTTPS_PROXY"; curl -sS -m 10 -o /dev/null -w '%{http_code}' http://outside.test/b-own`,
          waitForCompletion: true,
        }),
      });
      const [bProxy = '', bStatus] = ((await json<{ stdout: string }>(bExec)).stdout ?? '').split('\n');
      expect(bStatus).toBe('200');
      await new Promise((r) => setTimeout(r, 200));
      // Control: B itself gets its secret injected, so the check below can fail.
      expect(outsideLog.split('\n').find((l) => l.includes('/b-own'))).toContain(B_SECRET);
      const b = new URL(bProxy);
      const bId = decodeURIComponent(b.username);
      const bPw = decodeURIComponent(b.password);
      const basic = (u: string, pw: string) => `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}`;
      const ownPw = decodeURIComponent(
        new URL((await exec(p!, PROBE, 'printf %s "$HTTPS_PROXY"')).stdout ?? '').password,
      );
      const target = 'http://outside.test/a-as-b';
      const got = await probe([
        { label: 'b-id-no-password', mode: 'http', target, auth: basic(bId, '') },
        { label: 'b-id-a-password', mode: 'http', target, auth: basic(bId, ownPw) },
        { label: 'b-id-b-password-from-a', mode: 'http', target, auth: basic(bId, bPw) },
        {
          label: 'forwarded-as-b',
          mode: 'http',
          target,
          auth: 'none',
          headers: { 'x-forwarded-for': '10.246.0.3' },
        },
        {
          label: 'connect-b-id-b-password-from-a',
          mode: 'connect',
          target: 'outside.test:80',
          auth: basic(bId, bPw),
        },
      ]);
      expect(got).toEqual({
        'b-id-no-password': 407,
        'b-id-a-password': 407,
        'b-id-b-password-from-a': 407,
        'forwarded-as-b': 407,
        'connect-b-id-b-password-from-a': 407,
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(outsideLog).not.toContain('/a-as-b');
      expect(outsideLog.split(B_SECRET).length - 1).toBe(1); // only B's own request carried it
    });
  },
);
