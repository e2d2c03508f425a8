// Network namespaces the egress tests create for themselves: "the outside world" and "a sandbox-
// like client", each joined to the host by a veth pair with addresses in 10.231.0.0/16. Traffic in
// these tests goes only to loopback and to these namespaces (workplace rule: never anywhere else).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export interface Namespace {
  name: string;
  hostIf: string;
  hostIp: string;
  nsIp: string;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Why this machine cannot run namespace tests, or undefined when it can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return 'iproute2 (ip netns) is not installed';
  }
  return undefined;
}

export function removeNamespace(ns: Pick<Namespace, 'name' | 'hostIf'>): void {
  try {
    execFileSync('ip', ['netns', 'pids', ns.name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .filter(Boolean)
      .forEach((pid) => {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      });
  } catch {
    // no such namespace
  }
  for (const args of [
    ['link', 'del', ns.hostIf],
    ['netns', 'del', ns.name],
  ]) {
    try {
      ip(args);
    } catch {
      // already gone
    }
  }
}

/** A namespace with lo up and a veth to the host: host side `hostIp/24`, namespace side `nsIp/24`. */
export function createNamespace(ns: Namespace): Namespace {
  removeNamespace(ns);
  const peer = `${ns.hostIf.slice(0, 13)}n`;
  ip(['netns', 'add', ns.name]);
  ip(['link', 'add', ns.hostIf, 'type', 'veth', 'peer', 'name', peer]);
  ip(['link', 'set', peer, 'netns', ns.name]);
  ip(['addr', 'add', `${ns.hostIp}/24`, 'dev', ns.hostIf]);
  ip(['link', 'set', ns.hostIf, 'up']);
  ip(['-n', ns.name, 'addr', 'add', `${ns.nsIp}/24`, 'dev', peer]);
  ip(['-n', ns.name, 'link', 'set', peer, 'up']);
  ip(['-n', ns.name, 'link', 'set', 'lo', 'up']);
  return ns;
}

export function spawnIn(ns: string, command: string, args: string[]): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion inside a namespace (bounded by `timeoutMs`). */
export function runIn(ns: string, command: string, args: string[], timeoutMs = 15_000): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawnIn(ns, command, args);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Starts a long-running process in a namespace and waits for `readyLine` on its stdout. */
export function startIn(
  ns: string,
  command: string,
  args: string[],
  readyLine = 'ready',
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawnIn(ns, command, args);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`not ready in 10 s: ${out} ${err}`)), 10_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(readyLine)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
}
