// Network bodies of the sandbox API (reference sandbox-api.md §1.4).
import * as z from 'zod/mini';

export const portEntrySchema = z.object({
  pid: z.int(),
  protocol: z.enum(['tcp', 'udp']),
  localAddr: z.string(),
  localPort: z.int(),
  remoteAddr: z.string(),
  remotePort: z.int(),
  state: z.string(),
  processName: z.string(),
});
export type PortEntry = z.infer<typeof portEntrySchema>;

export const processPortsResponseSchema = z.object({ pid: z.int(), ports: z.array(portEntrySchema) });
export type ProcessPortsResponse = z.infer<typeof processPortsResponseSchema>;

export const portMonitorRequestSchema = z.object({ callback: z.url() });
export type PortMonitorRequest = z.infer<typeof portMonitorRequestSchema>;

/** `PUT /network/tunnel/config` body: base64 of the JSON below. */
export const tunnelConfigRequestSchema = z.object({ config: z.string().check(z.minLength(1)) });

const cidr = z
  .string()
  .check(z.regex(/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$|^[0-9a-fA-F:]+\/\d{1,3}$/, 'must be a CIDR'));
const wgKey = z
  .string()
  .check(z.regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$/, 'must be a base64 WireGuard key'));

/** The WireGuard tunnel configuration with its defaults (§1.4 table). */
export const tunnelConfigSchema = z.object({
  local_ip: cidr,
  peer_endpoint: z.string().check(z.regex(/^(\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5}$/, 'must be host:port')),
  peer_public_key: wgKey,
  private_key: wgKey,
  mtu: z._default(z.int().check(z.minimum(68), z.maximum(65535)), 1420),
  listen_port: z._default(z.int().check(z.minimum(1), z.maximum(65535)), 51820),
  interface_name: z._default(z.string().check(z.minLength(1), z.maxLength(15)), 'wg0'),
  allowed_ips: z._default(z.array(cidr), ['0.0.0.0/0']),
  persistent_keepalive: z._default(z.int().check(z.minimum(0)), 25),
  route_all: z._default(z.boolean(), false),
});
export type TunnelConfig = z.infer<typeof tunnelConfigSchema>;
