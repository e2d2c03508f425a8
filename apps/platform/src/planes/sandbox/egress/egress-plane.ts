// Egress for the composition root (compose.ts) (ARCHITECTURE.md beside this file): the platform CA, the
// proxy on the sandbox bridge's gateway address, the per-sandbox policies and the tunnel routes.
// Two steps because of an ordering knot: the sandbox plane needs the proxy URL and CA files
// before its controllers start sandboxes (`prepare`), and the proxy needs the plane's bridge and
// live-sandbox map (`start`). Only compose.ts calls these (they open files and a socket).
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { CommandRunner, HostFile } from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { SandboxSpec } from '@tarmac/contract';
import { SANDBOX_KIND } from '../records/sandbox-record.js';
import { sandboxSecretContext, viewSandboxSpec } from '../records/sandbox-secrets.js';
import type { SecretBox } from '../../../framework/secrets.js';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import { handleTunnelRoute } from '../tunnel/tunnel-routes.js';
import { TunnelService } from '../tunnel/tunnel-service.js';
import { loadOrCreateEgressCa, type EgressCaFiles } from './ca-files.js';
import { LeafCertificates } from './certificate-authority.js';
import {
  DestinationGuard,
  overrideLookup,
  type Lookup,
} from '../../../framework/destinations/destination-guard.js';
import { HostAddresses } from '../../../framework/destinations/host-addresses.js';
import { EgressProxy, type EgressEvent } from './proxy-server.js';
import { SandboxPolicies, type LiveAddress } from './sandbox-policies.js';
import { egressSandboxDefaults, proxyUrlFor } from './sandbox-setup.js';
import type { SandboxCredentials } from '../sandbox-credentials.js';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server as NetServer } from 'node:net';
import { readHandedPorts, rememberHandedPort } from './port-file.js';

export interface EgressSettings {
  home: { root: string; keys: string };
  /** The sandbox bridge's IPv4 CIDR; the proxy listens on its first address (the gateway). */
  subnet: string;
  port: number;
  /** Fixed name → address answers (TARMAC_EGRESS_RESOLVE; tests). */
  resolve: Record<string, string>;
  /** PEM CAs trusted for the upstream TLS the proxy terminates (the extra CAs, tests' own). */
  extraUpstreamCa: string[];
  /**
   * The operator's extra CAs (TARMAC_EXTRA_CA_CERTS, issue 14 item 10), added to every sandbox's
   * trust stores (ca-files.ts); also in `extraUpstreamCa`.
   */
  extraCaPem?: string[];
  /** Per-sandbox proxy passwords (gateway/sandbox-credentials.ts); without, every sandbox gets 407. */
  credentials?: Pick<SandboxCredentials, 'egressPassword' | 'egressPasswordMatches'>;
  /** Internal destinations the operator opens (TARMAC_EGRESS_ALLOW_CIDRS, destination-guard.ts). */
  allowCidrs?: string[];
  log?: (event: EgressEvent) => void;
  now: Date;
}

/** The first host address of an IPv4 CIDR (the engine gives it to the host's bridge). */
export function gatewayAddress(cidr: string): string {
  const [addr = '', bits = '32'] = cidr.split('/');
  const n = addr.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const mask = Number(bits) === 0 ? 0 : (0xffffffff << (32 - Number(bits))) >>> 0;
  const g = ((n & mask) >>> 0) + 1;
  return [24, 16, 8, 0].map((s) => (g >>> s) & 255).join('.');
}

export interface EgressAttach {
  ensureBridge(): Promise<void>;
  live: { all(): LiveAddress[] };
  resources: {
    getById(id: string): Promise<ResourceRow<unknown> | undefined>;
    update(
      id: string,
      patch: { system: Record<string, unknown> },
      expectedRevision: number,
    ): Promise<unknown>;
  };
  /** The SecretBox sealing `proxy.routing[].secrets` (keys/secrets.key; one per process). */
  secrets: SecretBox;
  changes: ChangeFeed;
  runner: CommandRunner;
  netnsOf: (engineId: string) => string;
  /** Controllers' first resync after start (SandboxPoliciesDeps.ready). */
  ready?: Promise<void>;
  /** Live workloads the `live` list may not show yet (SandboxPoliciesDeps.lookup: job tasks). */
  lookupLive?: (id: string) => Promise<LiveAddress | undefined>;
  /** Applies the connection caps and timeouts (issue 19 item 7) before the proxy listens. */
  bound?: (server: HttpServer) => void;
}

/**
 * The shared port range: a proxy whose configured port is taken falls back to the first free one
 * of 3128–3147. The engine's firewall chain is per bridge and rewritten by every platform on it,
 * so every platform opens this whole range (plus its own ports): platforms sharing a bridge (tests
 * on one machine) never close each other's proxies.
 */
export const SHARED_PORTS = Array.from({ length: 20 }, (_, i) => 3128 + i);

export class EgressPlane {
  /** Every port a proxy on this bridge may use (the engine's `allowedHostPorts`). */
  readonly ports: number[];
  private readonly listening: Promise<string>;
  private settle!: { resolve: (url: string) => void; reject: (err: Error) => void };
  private proxy: EgressProxy | undefined;
  private policies: SandboxPolicies | undefined;
  private tunnels: TunnelService | undefined;
  private readonly extraListeners: NetServer[] = [];

  private constructor(
    private readonly s: EgressSettings,
    readonly ca: EgressCaFiles,
    /** Ports earlier runs of this home handed to sandboxes (port-file.ts). */
    private readonly handed: number[],
  ) {
    this.ports = [...new Set([s.port, ...handed, ...SHARED_PORTS])];
    this.listening = new Promise<string>((resolve, reject) => (this.settle = { resolve, reject }));
    this.listening.catch(() => undefined); // surfaced by sandboxDefaults, not as an unhandled rejection
  }

  /**
   * For the sandbox controller: waits until the proxy listens, so the URL is the bound one; with
   * the sandbox's own proxy credentials in it (proxy-auth.ts).
   */
  readonly sandboxDefaults = async (sandbox?: {
    id: string;
  }): Promise<{ env: Record<string, string>; files: HostFile[] }> => {
    const url = await this.listening;
    const credentials = this.s.credentials;
    return egressSandboxDefaults(
      sandbox && credentials
        ? proxyUrlFor(url, { user: sandbox.id, password: credentials.egressPassword(sandbox.id) })
        : url,
      this.ca,
    );
  };

  static async prepare(s: EgressSettings): Promise<EgressPlane> {
    const ca = await loadOrCreateEgressCa(s.home, s.now, s.extraCaPem ?? []);
    return new EgressPlane(s, ca, await readHandedPorts(s.home.root));
  }

  /** For the sandbox gateway: the tunnel routes, answered here once `start` ran. */
  readonly intercept = async (
    req: IncomingMessage,
    res: ServerResponse,
    entry: { id: string; engineId: string },
    path: string,
  ): Promise<boolean> => (this.tunnels ? handleTunnelRoute(this.tunnels, req, res, entry, path) : false);

  async start(a: EgressAttach): Promise<void> {
    await a.ensureBridge();
    // The bridge (no sandbox reaches another, or the platform, through the proxy) and every
    // address of this host and its bridges (issue 19 item 4).
    const guard = new DestinationGuard({
      blockedCidrs: [this.s.subnet],
      hostAddresses: new HostAddresses({
        interfaces: networkInterfaces,
        isBridge: (name) => /^[\w.:-]+$/.test(name) && existsSync(`/sys/class/net/${name}/bridge`),
      }),
      allowCidrs: this.s.allowCidrs ?? [],
    });
    const box = a.secrets;
    this.policies = new SandboxPolicies({
      live: a.live,
      resources: a.resources,
      revealNetwork: (row) => {
        const spec = viewSandboxSpec(
          box,
          row.spec as SandboxSpec,
          sandboxSecretContext(row.workspace, row.name),
          'reveal',
        );
        return spec.network;
      },
      changes: a.changes,
      sandboxKind: SANDBOX_KIND,
      passwordMatches: (id, password) => this.s.credentials?.egressPasswordMatches(id, password) ?? false,
      ...(a.ready ? { ready: a.ready } : {}),
      ...(a.lookupLive ? { lookup: a.lookupLive } : {}),
    });
    const policies = this.policies;
    this.tunnels = new TunnelService({
      resources: a.resources,
      runner: a.runner,
      netnsOf: a.netnsOf,
      changed: (id) => policies.invalidate(id),
      blockedEndpoints: guard.snapshot(),
    });
    this.proxy = new EgressProxy({
      policyFor: policies.policyFor,
      leafCertificates: new LeafCertificates(this.ca.ca),
      extraUpstreamCa: this.s.extraUpstreamCa,
      guard,
      lookup: overrideLookup(this.s.resolve, dnsLookup as unknown as Lookup),
      ...(this.s.log ? { log: this.s.log } : {}),
    });
    a.bound?.(this.proxy.server);
    const host = gatewayAddress(this.s.subnet);
    // The configured port, else the shared range; handed-out ports are extra listeners below.
    const primary = [...new Set([this.s.port, ...SHARED_PORTS])];
    let bound: number | undefined;
    for (const port of primary) {
      try {
        await listen(this.proxy.server, host, port);
        bound = port;
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
          this.settle.reject(err as Error);
          throw err;
        }
      }
    }
    if (bound === undefined) {
      const err = new Error(
        `egress proxy: port ${this.s.port} and ${SHARED_PORTS[0]}-${SHARED_PORTS.at(-1)} on ${host} are all in use`,
      );
      this.settle.reject(err);
      throw err;
    }
    // Sandboxes that survived a restart still point at the port their environment names.
    const proxyServer = this.proxy.server;
    for (const port of this.handed.filter((p) => p !== bound)) {
      const extra = createServer((socket) => proxyServer.emit('connection', socket));
      try {
        await listen(extra, host, port);
        this.extraListeners.push(extra);
      } catch {
        extra.close(); // taken by another platform since: those sandboxes lost their proxy
      }
    }
    await rememberHandedPort(this.s.home.root, bound);
    this.settle.resolve(`http://${host}:${bound}`);
  }

  /** The bound proxy URL (after `start`). */
  url(): Promise<string> {
    return this.listening;
  }

  async close(): Promise<void> {
    for (const l of this.extraListeners) l.close();
    this.policies?.close();
    await this.proxy?.close();
  }
}

function listen(server: NetServer, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolve();
    });
  });
}
