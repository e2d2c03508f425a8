// The sandbox API's tunnel operations (spec "Sandbox API": DELETE /network/tunnel; reference
// sandbox-api.md §1.4 PUT /network/tunnel/config), done by the platform: sandboxd runs without
// CAP_NET_ADMIN and cannot touch its own network, and "egress" is the platform's to give anyway.
// A sandbox's outbound connectivity is its "tunnel": by default the egress proxy path is up; a
// PUT with a WireGuard configuration adds a real WireGuard interface (wireguard.ts). DELETE cuts
// both: the proxy refuses the sandbox (policy `connected: false`) and the interface is removed, so
// no route out is left; inbound (the sandbox API, previews) goes on working. The state lives in
// the record's `system.egress` so it survives a platform restart.
import type { BlockList } from 'node:net';
import { isIP } from 'node:net';
import { tunnelConfigSchema, type TunnelConfig } from '@tarmac/contract';
import type { CommandRunner } from '@tarmac/engine';
import { StaleRevisionError, type ResourceRow } from '@tarmac/store';
import { egressConnected } from '../egress/sandbox-policies.js';
import { createWireguard, deleteWireguard, wireguardExists, type WireguardInterface } from './wireguard.js';

export class TunnelError extends Error {
  constructor(
    readonly status: 400 | 422 | 500,
    message: string,
  ) {
    super(message);
  }
}

export interface TunnelSandbox {
  readonly id: string;
  readonly engineId: string;
}

interface Resources {
  getById(id: string): Promise<ResourceRow<unknown> | undefined>;
  update(id: string, patch: { system: Record<string, unknown> }, expectedRevision: number): Promise<unknown>;
}

export interface TunnelServiceDeps {
  resources: Resources;
  runner: CommandRunner;
  netnsOf: (engineId: string) => string;
  /** Told after a record's egress state changed (SandboxPolicies.invalidate). */
  changed: (id: string) => void;
  /** Peer endpoints never allowed (loopback, the sandbox bridge): the UDP socket is the host's. */
  blockedEndpoints?: BlockList;
}

interface EgressState {
  connected: boolean;
  wireguard?: WireguardInterface;
}

export class TunnelService {
  constructor(private readonly d: TunnelServiceDeps) {}

  /** DELETE /network/tunnel: 400 when nothing is up, 500 when stopping fails. */
  async disconnect(sandbox: TunnelSandbox): Promise<{ message: string }> {
    const state = await this.state(sandbox);
    const wgUp = state.wireguard ? await wireguardExists(this.d.runner, state.wireguard) : false;
    if (!state.connected && !wgUp) throw new TunnelError(400, 'no tunnel is running');
    try {
      if (state.wireguard && wgUp) await deleteWireguard(this.d.runner, state.wireguard);
    } catch (err) {
      throw new TunnelError(500, `failed to stop tunnel: ${message(err)}`);
    }
    await this.save(sandbox, { connected: false });
    return { message: 'Tunnel disconnected' };
  }

  /** PUT /network/tunnel/config: `{config: base64(JSON)}`; 400 bad body, 422 bad config, 500 apply. */
  async configure(sandbox: TunnelSandbox, body: unknown): Promise<{ message: string }> {
    const { config, listenPort } = this.parse(body);
    const state = await this.state(sandbox);
    try {
      if (state.wireguard) await deleteWireguard(this.d.runner, state.wireguard);
      const wg = await createWireguard(
        this.d.runner,
        this.d.netnsOf(sandbox.engineId),
        sandbox.engineId,
        config,
        listenPort,
      );
      await this.save(sandbox, { connected: true, wireguard: wg });
    } catch (err) {
      await this.save(sandbox, { connected: state.connected }).catch(() => undefined);
      throw new TunnelError(500, `failed to apply tunnel configuration: ${message(err)}`);
    }
    return { message: 'Tunnel configuration updated successfully' };
  }

  private parse(body: unknown): { config: TunnelConfig; listenPort: number | undefined } {
    const encoded = (body as { config?: unknown } | null)?.config;
    if (typeof encoded !== 'string' || encoded === '') {
      throw new TunnelError(400, 'config: required, the base64 of the tunnel configuration JSON');
    }
    let raw: unknown;
    try {
      raw = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
    } catch {
      throw new TunnelError(422, 'invalid tunnel config: not base64-encoded JSON');
    }
    const parsed = tunnelConfigSchema.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new TunnelError(
        422,
        `invalid tunnel config: ${i?.path.join('.') ?? ''}: ${i?.message ?? 'invalid'}`,
      );
    }
    const config = parsed.data;
    if (['lo', 'eth0'].includes(config.interface_name) || !/^[A-Za-z0-9_.-]+$/.test(config.interface_name)) {
      throw new TunnelError(
        422,
        `invalid tunnel config: interface_name: "${config.interface_name}" cannot be used`,
      );
    }
    const host = config.peer_endpoint.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    const family = isIP(host);
    if (family !== 0 && this.d.blockedEndpoints?.check(host, family === 6 ? 'ipv6' : 'ipv4')) {
      throw new TunnelError(
        422,
        `invalid tunnel config: peer_endpoint: ${host} is a platform-internal address`,
      );
    }
    // listen_port only when given: every tunnel's socket is in the host namespace (wireguard.ts).
    const explicitPort = typeof (raw as { listen_port?: unknown }).listen_port === 'number';
    return { config, listenPort: explicitPort ? config.listen_port : undefined };
  }

  private async state(sandbox: TunnelSandbox): Promise<EgressState> {
    const row = await this.d.resources.getById(sandbox.id);
    const system = row?.system ?? {};
    const wg = (system.egress as { wireguard?: WireguardInterface } | undefined)?.wireguard;
    return { connected: egressConnected(system), ...(wg ? { wireguard: wg } : {}) };
  }

  private async save(sandbox: TunnelSandbox, state: EgressState): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const row = await this.d.resources.getById(sandbox.id);
      if (!row) return;
      try {
        await this.d.resources.update(sandbox.id, { system: { ...row.system, egress: state } }, row.revision);
        break;
      } catch (err) {
        if (attempt >= 7 || !(err instanceof StaleRevisionError)) throw err;
      }
    }
    this.d.changed(sandbox.id);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
