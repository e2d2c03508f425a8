// Composition of egress for main.ts (ARCHITECTURE.md beside this file): the platform CA, the
// proxy on the sandbox bridge's gateway address, the per-sandbox policies and the tunnel routes.
// Two steps because of an ordering knot: the sandbox plane needs the proxy URL and CA files
// before its controllers start sandboxes (`prepare`), and the proxy needs the plane's bridge and
// live-sandbox map (`start`). Only main.ts calls these (they open files and a socket).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CommandRunner, HostFile } from '@tarmac/engine';
import type { ResourceRow } from '@tarmac/store';
import type { SandboxSpec } from '@tarmac/contract';
import { SANDBOX_KIND } from '../controllers/sandbox-record.js';
import { sandboxSecretContext, viewSandboxSpec } from '../modules/sandboxes/sandbox-secrets.js';
import { SecretBox } from '../resources/secrets.js';
import type { ChangeFeed } from '../shared/change-feed.js';
import { handleTunnelRoute } from '../tunnel/tunnel-routes.js';
import { TunnelService } from '../tunnel/tunnel-service.js';
import { loadOrCreateEgressCa, type EgressCaFiles } from './ca-files.js';
import { LeafCertificates } from './certificate-authority.js';
import { alwaysBlocked, overrideLookup, type Lookup } from './destination-guard.js';
import { EgressProxy, type EgressEvent } from './proxy-server.js';
import { SandboxPolicies, type LiveAddress } from './sandbox-policies.js';
import { egressSandboxDefaults } from './sandbox-setup.js';
import { lookup as dnsLookup } from 'node:dns';

export interface EgressSettings {
  home: { root: string; keys: string };
  /** The sandbox bridge's IPv4 CIDR; the proxy listens on its first address (the gateway). */
  subnet: string;
  port: number;
  /** Fixed name → address answers (TARMAC_EGRESS_RESOLVE; tests). */
  resolve: Record<string, string>;
  /** Extra PEM CAs trusted for upstream TLS (TARMAC_EGRESS_EXTRA_CA; tests). */
  extraUpstreamCa: string[];
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
  /** Key of the SecretBox sealing `proxy.routing[].secrets` (keys/secrets.key). */
  secretKey: Uint8Array;
  changes: ChangeFeed;
  runner: CommandRunner;
  netnsOf: (engineId: string) => string;
}

export class EgressPlane {
  readonly proxyUrl: string;
  readonly sandboxDefaults: { env: Record<string, string>; files: HostFile[] };
  private proxy: EgressProxy | undefined;
  private policies: SandboxPolicies | undefined;
  private tunnels: TunnelService | undefined;

  private constructor(
    private readonly s: EgressSettings,
    readonly ca: EgressCaFiles,
  ) {
    this.proxyUrl = `http://${gatewayAddress(s.subnet)}:${s.port}`;
    this.sandboxDefaults = egressSandboxDefaults(this.proxyUrl, ca);
  }

  static async prepare(s: EgressSettings): Promise<EgressPlane> {
    return new EgressPlane(s, await loadOrCreateEgressCa(s.home, s.now));
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
    const blocked = alwaysBlocked([this.s.subnet]);
    const box = new SecretBox(a.secretKey);
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
    });
    const policies = this.policies;
    this.tunnels = new TunnelService({
      resources: a.resources,
      runner: a.runner,
      netnsOf: a.netnsOf,
      changed: (id) => policies.invalidate(id),
      blockedEndpoints: blocked,
    });
    this.proxy = new EgressProxy({
      policyFor: policies.policyFor,
      leafCertificates: new LeafCertificates(this.ca.ca),
      extraUpstreamCa: this.s.extraUpstreamCa,
      // The bridge: no sandbox reaches another sandbox or the platform through the proxy.
      blockedCidrs: [this.s.subnet],
      lookup: overrideLookup(this.s.resolve, dnsLookup as unknown as Lookup),
      ...(this.s.log ? { log: this.s.log } : {}),
    });
    const proxy = this.proxy;
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(this.s.port, gatewayAddress(this.s.subnet), () => resolve());
    });
  }

  async close(): Promise<void> {
    this.policies?.close();
    await this.proxy?.close();
  }
}
