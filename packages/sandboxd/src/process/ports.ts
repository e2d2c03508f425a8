// Sockets from procfs: listening ports for waitForPorts (reference sandbox-api.md §1.3: only a
// listening socket bound to a routable interface counts, not loopback) and the per-process port
// list of GET /network/process/{pid}/ports (§1.4).
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { PortEntry } from '@tarmac/contract';

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

export interface Socket {
  inode: string;
  protocol: 'tcp' | 'udp';
  localAddr: string;
  localPort: number;
  remoteAddr: string;
  remotePort: number;
  state: string;
}

/** Hex address of /proc/net/{tcp,udp}[6] → printable IP (little-endian 32-bit words). */
export function decodeAddr(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => (w.match(/../g) ?? []).reverse().map((b) => parseInt(b, 16)));
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  const v6 = groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
  const mapped = /^::ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(v6);
  if (mapped?.[1] && mapped[2]) {
    const a = parseInt(mapped[1], 16);
    const b = parseInt(mapped[2], 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return v6;
}

export function readSockets(procRoot: string): Socket[] {
  const out: Socket[] = [];
  for (const [file, protocol] of [
    ['tcp', 'tcp'],
    ['tcp6', 'tcp'],
    ['udp', 'udp'],
    ['udp6', 'udp'],
  ] as const) {
    let text: string;
    try {
      text = readFileSync(join(procRoot, 'net', file), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const [local, remote, st, inode] = [f[1], f[2], f[3], f[9]];
      if (!local || !remote || !st || !inode) continue;
      const [la = '', lp = '0'] = local.split(':');
      const [ra = '', rp = '0'] = remote.split(':');
      out.push({
        inode,
        protocol,
        localAddr: decodeAddr(la),
        localPort: parseInt(lp, 16),
        remoteAddr: decodeAddr(ra),
        remotePort: parseInt(rp, 16),
        state:
          protocol === 'udp' ? (st === '07' ? 'UNCONN' : (TCP_STATES[st] ?? st)) : (TCP_STATES[st] ?? st),
      });
    }
  }
  return out;
}

const isLoopback = (addr: string): boolean => addr.startsWith('127.') || addr === '::1';

/** TCP ports with a LISTEN socket on a routable address (0.0.0.0, ::, or a non-loopback IP). */
export function routableListeningPorts(procRoot: string): Set<number> {
  const ports = new Set<number>();
  for (const s of readSockets(procRoot)) {
    if (s.protocol === 'tcp' && s.state === 'LISTEN' && !isLoopback(s.localAddr)) ports.add(s.localPort);
  }
  return ports;
}

/** `pid` and all its descendants, from /proc/<n>/stat ppid fields. */
export function processTree(procRoot: string, pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(join(procRoot, name, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      /* exited meanwhile */
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, ppid] of parent) if (ppid === tree[i]) tree.push(child);
  }
  return tree;
}

function processName(procRoot: string, pid: number): string {
  try {
    return readFileSync(join(procRoot, String(pid), 'comm'), 'utf8').trim();
  } catch {
    return '';
  }
}

/** Sockets owned by `pid` or its descendants. */
export function processPorts(procRoot: string, pid: number): PortEntry[] {
  const owner = new Map<string, number>();
  for (const p of processTree(procRoot, pid)) {
    const fdDir = join(procRoot, String(p), 'fd');
    let fds: string[];
    try {
      fds = readdirSync(fdDir);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(join(fdDir, fd)));
        if (m?.[1] && !owner.has(m[1])) owner.set(m[1], p);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  const out: PortEntry[] = [];
  for (const s of readSockets(procRoot)) {
    const p = owner.get(s.inode);
    if (p === undefined) continue;
    const { inode: _inode, ...rest } = s;
    out.push({ pid: p, ...rest, processName: processName(procRoot, p) });
  }
  return out;
}
