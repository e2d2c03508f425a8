// A WireGuard peer in a namespace of its own (10.231.3.0/24 link to the host), with an HTTP
// server on its tunnel address: what a sandbox's PUT /network/tunnel/config connects to.
// Userspace wireguard-go (this kernel has no wireguard module).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createNamespace, removeNamespace, startIn, type Namespace } from './netns.js';

export const PEER_NS: Namespace = {
  name: 'tmeg-wg',
  hostIf: 'tmew0',
  hostIp: '10.231.3.1',
  nsIp: '10.231.3.2',
};
export const PEER_TUNNEL_IP = '10.99.0.2';
export const PEER_PORT = 51820;

export interface WgPeer {
  publicKey: string;
  /** Keys for the sandbox side. */
  clientPrivateKey: string;
  clientPublicKey: string;
  server: ChildProcess;
  stop(): void;
}

/** Why WireGuard tests cannot run, or undefined. */
export function wireguardUnavailable(): string | undefined {
  for (const bin of ['wg', 'wireguard-go']) {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    } catch {
      return `${bin} not installed (Debian packages wireguard-tools, wireguard-go)`;
    }
  }
  return undefined;
}

const wg = (args: string[], input?: string) =>
  execFileSync('wg', args, { encoding: 'utf8', ...(input !== undefined ? { input } : {}) }).trim();

export async function startWgPeer(): Promise<WgPeer> {
  createNamespace(PEER_NS);
  const privateKey = wg(['genkey']);
  const publicKey = wg(['pubkey'], privateKey);
  const clientPrivateKey = wg(['genkey']);
  const clientPublicKey = wg(['pubkey'], clientPrivateKey);
  const inNs = (cmd: string, args: string[], input?: string) =>
    execFileSync('ip', ['netns', 'exec', PEER_NS.name, cmd, ...args], {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
      ...(input !== undefined ? { input } : {}),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
  inNs('wireguard-go', ['wgpeer0']);
  // wg reads keys from files (node's stdin pipes are sockets, which /dev/stdin cannot open).
  const keyDir = mkdtempSync(join(tmpdir(), 'tarmac-wgpeer-'));
  writeFileSync(join(keyDir, 'key'), `${privateKey}\n`, { mode: 0o600 });
  inNs('wg', [
    'set',
    'wgpeer0',
    'private-key',
    join(keyDir, 'key'),
    'listen-port',
    String(PEER_PORT),
    'peer',
    clientPublicKey,
    'allowed-ips',
    '10.99.0.0/24',
  ]);
  rmSync(keyDir, { recursive: true, force: true });
  execFileSync('ip', ['-n', PEER_NS.name, 'addr', 'add', `${PEER_TUNNEL_IP}/24`, 'dev', 'wgpeer0']);
  execFileSync('ip', ['-n', PEER_NS.name, 'link', 'set', 'wgpeer0', 'up']);
  const server = await startIn(PEER_NS.name, process.execPath, [
    '-e',
    `require('http').createServer((q, s) => s.end('hello through wireguard ' + q.url)).listen(8099, '${PEER_TUNNEL_IP}', () => console.log('ready'))`,
  ]);
  return {
    publicKey,
    clientPrivateKey,
    clientPublicKey,
    server,
    stop() {
      server.kill('SIGKILL');
      removeNamespace(PEER_NS);
      // wireguard-go's control socket outlives a namespace removal (the run dir is the host's).
      rmSync('/var/run/wireguard/wgpeer0.sock', { force: true });
    },
  };
}
