// The claim's prepared hostname setter (hostname-setters.ts) on a real UTS namespace: the name
// lands in that namespace only, the setter is used once, and without one `set` says so (the
// engine falls back to nsenter).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { HostnameSetters } from './hostname-setters.js';
import { DEFAULT_PATH } from './runner.js';

const canUnshare = process.getuid?.() === 0;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A process in a UTS namespace of its own; resolves with its pid once it is in there. */
async function inNewUts(): Promise<number> {
  const child = spawn('unshare', ['--uts', 'sh', '-c', 'echo ready; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  await new Promise((resolve) => child.stdout?.once('data', resolve));
  return child.pid!;
}

const utsName = (pid: number) =>
  execFileSync('nsenter', [`--target=${pid}`, '--uts', 'hostname'], { encoding: 'utf8' }).trim();

describe.skipIf(!canUnshare)('HostnameSetters (needs root for unshare/nsenter)', () => {
  it('sets the hostname of the target namespace, not the host, and only once', async () => {
    const pid = await inNewUts();
    const setters = new HostnameSetters({ PATH: DEFAULT_PATH });
    setters.prepare('sb-1', pid);
    const before = hostname();
    expect(await setters.set('sb-1', 'claimed-name')).toBe(true);
    expect(utsName(pid)).toBe('claimed-name');
    expect(hostname()).toBe(before);
    expect(await setters.set('sb-1', 'second')).toBe(false); // used up: the caller falls back
    expect(utsName(pid)).toBe('claimed-name');
  });

  it("takes the setter's `ok` even when node sees the shell exit before reading it", async () => {
    const pid = await inNewUts();
    // The shell exits at once; its `ok` comes 300 ms later from a child still holding its stdout:
    // the order a busy event loop can see the real setter's exit and output in.
    const late = 'read -r h && printf %s "$h" > /proc/sys/kernel/hostname && { (sleep 0.3; echo ok) & }';
    const setters = new HostnameSetters({ PATH: DEFAULT_PATH }, late);
    setters.prepare('sb-late', pid);
    expect(await setters.set('sb-late', 'late-name')).toBe(true);
    expect(utsName(pid)).toBe('late-name');
  });

  it('has nothing to set with for a sandbox it never prepared, or one dropped', async () => {
    const pid = await inNewUts();
    const setters = new HostnameSetters({ PATH: DEFAULT_PATH });
    expect(await setters.set('sb-none', 'x')).toBe(false);
    setters.prepare('sb-2', pid);
    setters.drop('sb-2');
    expect(await setters.set('sb-2', 'x')).toBe(false);
    expect(utsName(pid)).not.toBe('x');
  });
});
