// Egress for image builds (issue 15 "Builds": `RUN npm ci` may reach the package registries this
// machine reaches; planes/builds/build-network.ts). Each build gets a network namespace attached
// to the sandbox bridge exactly like a sandbox (the engine's BridgeNetwork: isolated, pinned port,
// no default route, the host's INPUT chain open only on the proxy ports), so the only thing a RUN
// step can talk to is a proxy on the bridge gateway. That proxy is this file's: the same
// EgressProxy code as the sandboxes' (proxy-server.ts), with its own listener, its own upstream
// connection pools and a stricter destination guard — besides everything a sandbox can never
// reach (loopback, link-local and so the metadata address, the bridge, every host address and
// bridge subnet), private and shared ranges too: a build is a tenant's code run by the platform,
// not a workload with network settings, so its way out is "the public internet" and nothing
// internal. The operator's allow-list (TARMAC_EGRESS_ALLOW_CIDRS) opens internal destinations for
// builds as it does for sandboxes (an internal package mirror).
//
// Who asks is proved like a sandbox proves it (proxy-auth.ts): the proxy URL a build gets carries a
// random per-build password, held only in this process and revoked with the namespace; the request
// must also come from that build's own address. Namespaces a crashed run left behind are removed at
// the next start (a marker file per namespace under `stateDir`).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { DestinationGuard, type Lookup } from '../../../framework/destinations/destination-guard.js';
import { HostAddresses } from '../../../framework/destinations/host-addresses.js';
import { readNetworkSettings } from '../records/network-settings.js';
import type { LeafCertificates } from './certificate-authority.js';
import { compilePolicy, type EgressPolicy } from './policy.js';
import type { ProxyCredentials } from './proxy-auth.js';
import { EgressProxy, type EgressEvent } from './proxy-server.js';
import { proxyUrlFor } from './sandbox-setup.js';

/**
 * Ports the build proxy may listen on (the first free one), on the bridge gateway. Opened in the
 * bridge's INPUT chain next to the sandbox proxy's range (compose.ts `allowedHostPorts`).
 */
export const BUILD_PROXY_PORTS = Array.from({ length: 10 }, (_, i) => 3148 + i);

/**
 * Refused for builds on top of the sandbox guard: RFC 1918, shared address space (RFC 6598, carrier
 * NAT and some clouds' internal networks), benchmarking (RFC 2544, used internally by some
 * networks). IPv6 unique-local and link-local are refused for everyone already.
 */
export const BUILD_PRIVATE_CIDRS = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '198.18.0.0/15',
];

export interface BuildNetworkAttach {
  /** The engine's BridgeNetwork: a pinned netns on the sandbox bridge, no default route. */
  attach(id: string): Promise<{ ip: string; netnsPath: string }>;
  detach(id: string, ip: string | null): Promise<void>;
}

export interface BuildEgressDeps {
  network: BuildNetworkAttach;
  /** The sandbox bridge's CIDR; the proxy listens on its gateway address. */
  subnet: string;
  gateway: string;
  /** Internal destinations the operator opens (TARMAC_EGRESS_ALLOW_CIDRS). */
  allowCidrs: readonly string[];
  lookup: Lookup;
  extraUpstreamCa: readonly string[];
  /** Required by the proxy (routing interception); builds have no routing rules, so unused. */
  leafCertificates: LeafCertificates;
  /** Marker files of namespaces in use (crash cleanup at the next start). */
  stateDir: string;
  log?: (event: EgressEvent) => void;
  /** Connection caps and timeouts (issue 19 item 7), applied before the proxy listens. */
  bound?: (server: HttpServer) => void;
}

interface Open {
  ip: string;
  password: Buffer;
  policy: EgressPolicy;
}

/** One build's network (the builds plane's BuildNetworkLease, build-network.ts; compose.ts joins them). */
export interface BuildEgressLease {
  netnsPath: string;
  proxyUrl: string;
  release(): Promise<void>;
}

export class BuildEgress {
  private readonly open_ = new Map<string, Open>();
  private proxy: EgressProxy | undefined;
  private url: string | undefined;

  constructor(private readonly d: BuildEgressDeps) {}

  /** The guard: the sandboxes' refusals, private ranges, minus the operator's allow-list. */
  static guard(subnet: string, allowCidrs: readonly string[]): DestinationGuard {
    return new DestinationGuard({
      blockedCidrs: [subnet, ...BUILD_PRIVATE_CIDRS],
      hostAddresses: new HostAddresses({
        interfaces: networkInterfaces,
        isBridge: (name) => /^[\w.:-]+$/.test(name) && existsSync(`/sys/class/net/${name}/bridge`),
      }),
      allowCidrs,
    });
  }

  /** Removes what a crashed run left, then listens on the first free build proxy port. */
  async start(): Promise<void> {
    await this.removeLeftovers();
    const proxy = new EgressProxy({
      policyFor: (ip, credentials) => this.policyFor(ip, credentials),
      leafCertificates: this.d.leafCertificates,
      extraUpstreamCa: this.d.extraUpstreamCa,
      guard: BuildEgress.guard(this.d.subnet, this.d.allowCidrs),
      lookup: this.d.lookup,
      ...(this.d.log ? { log: this.d.log } : {}),
    });
    this.d.bound?.(proxy.server);
    for (const port of BUILD_PROXY_PORTS) {
      try {
        await listen(proxy.server, this.d.gateway, port);
        this.proxy = proxy;
        this.url = `http://${this.d.gateway}:${port}`;
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
    throw new Error(
      `build proxy: ports ${BUILD_PROXY_PORTS[0]}-${BUILD_PROXY_PORTS.at(-1)} on ${this.d.gateway} are all in use`,
    );
  }

  async open(): Promise<BuildEgressLease> {
    if (!this.url) throw new Error('the build network is not available (its proxy did not start)');
    const id = `build-${randomBytes(5).toString('hex')}`;
    mkdirSync(this.d.stateDir, { recursive: true, mode: 0o700 });
    const marker = join(this.d.stateDir, id);
    writeFileSync(marker, '');
    let attached: { ip: string; netnsPath: string };
    try {
      attached = await this.d.network.attach(id); // undoes its own half-made wiring on failure
    } catch (err) {
      rmSync(marker, { force: true });
      throw err;
    }
    writeFileSync(marker, attached.ip);
    const password = randomBytes(24).toString('base64url');
    this.open_.set(id, {
      ip: attached.ip,
      password: Buffer.from(password),
      policy: compilePolicy(`build ${id}`, readNetworkSettings(undefined).settings),
    });
    let released: Promise<void> | undefined;
    return {
      netnsPath: attached.netnsPath,
      proxyUrl: proxyUrlFor(this.url, { user: id, password }),
      release: () =>
        (released ??= (async () => {
          this.open_.delete(id);
          await this.d.network.detach(id, attached.ip);
          rmSync(marker, { force: true });
        })()),
    };
  }

  /** The proxy's question: an open build's own credentials, from its own address. */
  policyFor(ip: string, credentials: ProxyCredentials | undefined): EgressPolicy | undefined {
    if (!credentials) return undefined;
    const entry = this.open_.get(credentials.user);
    if (!entry) return undefined;
    const given = Buffer.from(credentials.password);
    if (given.length !== entry.password.length || !timingSafeEqual(given, entry.password)) return undefined;
    return entry.ip === ip ? entry.policy : undefined;
  }

  /** Open builds' namespaces go (their builds were cancelled first) and the proxy closes. */
  async close(): Promise<void> {
    this.open_.clear();
    await this.proxy?.close();
    await this.removeLeftovers();
  }

  /** Namespaces of builds no process runs any more (a crash; the mode changed since). */
  async removeLeftovers(): Promise<void> {
    if (!existsSync(this.d.stateDir)) return;
    for (const id of readdirSync(this.d.stateDir)) {
      if (!/^build-[0-9a-f]{10}$/.test(id)) continue;
      const file = join(this.d.stateDir, id);
      const ip = readFileSync(file, 'utf8').trim();
      await this.d.network.detach(id, ip || null).catch(() => undefined);
      rmSync(file, { force: true });
    }
  }
}

function listen(server: HttpServer, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolve();
    });
  });
}
