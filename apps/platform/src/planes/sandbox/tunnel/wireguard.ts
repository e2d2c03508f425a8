// A WireGuard interface inside a sandbox's network namespace, made with userspace wireguard-go
// (this kernel has no wireguard module; Debian packages wireguard-go and wireguard-tools).
// wireguard-go creates a TUN device in the host namespace and keeps its UDP socket there; the
// device is then moved into the sandbox's namespace and renamed (the pattern WireGuard documents
// for containers: the encrypted side stays outside, the sandbox sees only the clear interface).
// Deleting the interface ends its wireguard-go process, and deleting the namespace deletes it.
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { connect, isIP } from 'node:net';
import type { TunnelConfig } from '@tarmac/contract';
import type { CommandRunner } from '@tarmac/engine';

export interface WireguardInterface {
  netns: string;
  name: string;
}

/** Host-side name while the device is created: unique per sandbox, within 15 characters. */
export function hostSideName(engineId: string): string {
  return `twg${createHash('sha256').update(engineId).digest('hex').slice(0, 11)}`;
}

async function must(runner: CommandRunner, cmd: string, args: string[], input?: string): Promise<void> {
  const r = await runner.run(cmd, args, { allowFail: true, ...(input !== undefined ? { input } : {}) });
  if (r.code !== 0) throw new Error(`${cmd} ${args.slice(0, 4).join(' ')}: ${(r.stderr || r.stdout).trim()}`);
}

/**
 * Brings the interface up in `netns`. `listenPort` undefined = any free port (every sandbox's
 * socket lives in the host namespace, so the reference's default 51820 would collide).
 */
export async function createWireguard(
  runner: CommandRunner,
  netns: string,
  engineId: string,
  config: TunnelConfig,
  listenPort: number | undefined,
): Promise<WireguardInterface> {
  const temp = hostSideName(engineId);
  await runner.run('ip', ['link', 'del', temp], { allowFail: true });
  try {
    await must(runner, 'wireguard-go', [temp]);
    // Configured over wireguard-go's UAPI socket: the private key never lands in a file or an argv.
    await uapiSet(temp, await uapiConfig(config, listenPort));
    await must(runner, 'ip', ['link', 'set', temp, 'netns', netns]);
  } catch (err) {
    await runner.run('ip', ['link', 'del', temp], { allowFail: true });
    throw err;
  }
  const name = config.interface_name;
  try {
    const batch = [
      `link set ${temp} name ${name}`,
      `addr add ${config.local_ip} dev ${name}`,
      `link set ${name} mtu ${config.mtu} up`,
    ];
    // Routes: each allowed range through the tunnel; the default route only with route_all
    // (reference §1.4 default false), so the proxy path and the tunnel do not fight by default.
    for (const cidr of config.allowed_ips) {
      const isDefault = cidr === '0.0.0.0/0' || cidr === '::/0';
      if (isDefault && !config.route_all) continue;
      batch.push(`route replace ${isDefault ? (cidr.includes(':') ? '::/0' : 'default') : cidr} dev ${name}`);
    }
    if (config.route_all && !config.allowed_ips.some((c) => c === '0.0.0.0/0')) {
      batch.push(`route replace default dev ${name}`);
    }
    await must(runner, 'ip', ['-n', netns, '-batch', '-'], batch.join('\n') + '\n');
  } catch (err) {
    await runner.run('ip', ['-n', netns, 'link', 'del', temp], { allowFail: true });
    await runner.run('ip', ['-n', netns, 'link', 'del', name], { allowFail: true });
    throw err;
  }
  return { netns, name };
}

const hex = (base64Key: string) => Buffer.from(base64Key, 'base64').toString('hex');

/** The UAPI `set` request (wireguard.com/xplatform "Configuration Protocol"). */
async function uapiConfig(config: TunnelConfig, listenPort: number | undefined): Promise<string> {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(config.peer_endpoint);
  const host = m?.[1] ?? m?.[2] ?? '';
  const address = isIP(host) ? host : (await lookup(host)).address;
  const endpoint = isIP(address) === 6 ? `[${address}]:${m?.[3]}` : `${address}:${m?.[3]}`;
  const lines = [
    'set=1',
    `private_key=${hex(config.private_key)}`,
    `listen_port=${listenPort ?? 0}`,
    'replace_peers=true',
    `public_key=${hex(config.peer_public_key)}`,
    `endpoint=${endpoint}`,
    `persistent_keepalive_interval=${config.persistent_keepalive}`,
    'replace_allowed_ips=true',
    ...config.allowed_ips.map((cidr) => `allowed_ip=${cidr}`),
  ];
  return `${lines.join('\n')}\n\n`;
}

function uapiSet(iface: string, request: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(`/var/run/wireguard/${iface}.sock`);
    let answer = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('wireguard-go did not answer')));
    socket.on('connect', () => socket.write(request));
    socket.on('data', (d: Buffer) => {
      answer += d.toString();
      if (!answer.endsWith('\n\n')) return;
      socket.end();
      const errno = /errno=(-?\d+)/.exec(answer)?.[1];
      if (errno === '0') resolve();
      else reject(new Error(`wireguard-go refused the configuration (errno ${errno ?? '?'})`));
    });
    socket.on('error', reject);
  });
}

export async function deleteWireguard(runner: CommandRunner, wg: WireguardInterface): Promise<void> {
  const r = await runner.run('ip', ['-n', wg.netns, 'link', 'del', wg.name], { allowFail: true });
  if (r.code !== 0 && !/Cannot find device|does not exist/.test(r.stderr)) {
    throw new Error(`ip link del ${wg.name}: ${r.stderr.trim()}`);
  }
}

export async function wireguardExists(runner: CommandRunner, wg: WireguardInterface): Promise<boolean> {
  const r = await runner.run('ip', ['-n', wg.netns, 'link', 'show', wg.name], { allowFail: true });
  return r.code === 0;
}
