// Network bodies of the sandbox API (reference sandbox-api.md §1.4).
import { z } from 'zod';

export const portEntrySchema = z.object({
  pid: z.number().int(),
  protocol: z.enum(['tcp', 'udp']),
  localAddr: z.string(),
  localPort: z.number().int(),
  remoteAddr: z.string(),
  remotePort: z.number().int(),
  state: z.string(),
  processName: z.string(),
});
export type PortEntry = z.infer<typeof portEntrySchema>;

export const processPortsResponseSchema = z.object({
  pid: z.number().int(),
  ports: z.array(portEntrySchema),
});
export type ProcessPortsResponse = z.infer<typeof processPortsResponseSchema>;

export const portMonitorRequestSchema = z.object({ callback: z.url() });
export type PortMonitorRequest = z.infer<typeof portMonitorRequestSchema>;

/** `PUT /network/tunnel/config` body: base64 of the JSON below. */
export const tunnelConfigRequestSchema = z.object({ config: z.string().min(1) });

const cidr = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$|^[0-9a-fA-F:]+\/\d{1,3}$/, 'must be a CIDR');
const wgKey = z.string().regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$/, 'must be a base64 WireGuard key');

/** The WireGuard tunnel configuration with its defaults (§1.4 table). */
export const tunnelConfigSchema = z.object({
  local_ip: cidr,
  peer_endpoint: z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5}$/, 'must be host:port'),
  peer_public_key: wgKey,
  private_key: wgKey,
  mtu: z.number().int().min(68).max(65535).default(1420),
  listen_port: z.number().int().min(1).max(65535).default(51820),
  interface_name: z.string().min(1).max(15).default('wg0'),
  allowed_ips: z.array(cidr).default(['0.0.0.0/0']),
  persistent_keepalive: z.number().int().min(0).default(25),
  route_all: z.boolean().default(false),
});
export type TunnelConfig = z.infer<typeof tunnelConfigSchema>;
