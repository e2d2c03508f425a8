// What the bridge-port pin (issue 19 item 3, packages/engine/src/port-filter.ts) adds to a
// sandbox's network wiring: BridgeNetwork.attach/detach on a bench bridge, interleaved A/B with
// the same engine code whose `nft` calls are skipped (a runner that answers them with success), and
// the pin's `nft -f` on its own. No runc: attach is the netns+veth part of createSandbox, which
// runs beside the overlay mount there. Needs root, ip and nft; removes its bridge and tables.
//
//   node --import tsx bench/network.ts            (RUNS=40)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BridgeNetwork } from '../packages/engine/src/network.js';
import { pinScript, unpinScript } from '../packages/engine/src/port-filter.js';
import { ProcessRunner, type CommandRunner } from '../packages/engine/src/runner.js';

const RUNS = Number(process.env.RUNS ?? 40);
const BRIDGE = 'tarmacbenchnw0';

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
};
const fmt = (xs: number[]) =>
  `median ${quantile(xs, 0.5).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms (n=${xs.length})`;

const real = new ProcessRunner();
/** The same engine without the pin: every nft call succeeds without running. */
const noPin: CommandRunner = {
  run: (cmd, args, opts) =>
    cmd === 'nft' ? Promise.resolve({ code: 0, stdout: '', stderr: '' }) : real.run(cmd, args, opts),
};

const leases = mkdtempSync(join(tmpdir(), 'tarmac-bench-nw-'));
const config = { bridge: BRIDGE, subnet: '10.245.0.0/24' };
const nets = {
  pinned: new BridgeNetwork(config, real, leases),
  unpinned: new BridgeNetwork(config, noPin, leases),
};
const attach: Record<string, number[]> = { pinned: [], unpinned: [] };
const detach: Record<string, number[]> = { pinned: [], unpinned: [] };
const nftAlone: number[] = [];

try {
  await nets.pinned.ensure();
  await nets.unpinned.ensure();
  for (let i = 0; i < RUNS; i++) {
    for (const k of i % 2 ? (['pinned', 'unpinned'] as const) : (['unpinned', 'pinned'] as const)) {
      const id = `bench-nw-${k}-${i}`;
      const t0 = performance.now();
      const a = await nets[k].attach(id);
      const t1 = performance.now();
      await nets[k].detach(id, a.ip);
      detach[k]!.push(performance.now() - t1);
      attach[k]!.push(t1 - t0);
    }
    const pin = { veth: 'tvbenchpin0', mac: '02:74:0a:f5:00:fe', ip: '10.245.0.254' };
    const t = performance.now();
    await real.run('nft', ['-f', '-'], { input: pinScript(BRIDGE, pin) });
    nftAlone.push(performance.now() - t);
    await real.run('nft', ['-f', '-'], { input: unpinScript(BRIDGE, pin) });
  }
  console.log(`attach, pinned:     ${fmt(attach.pinned!)}`);
  console.log(`attach, no pin:     ${fmt(attach.unpinned!)}`);
  console.log(`detach, pinned:     ${fmt(detach.pinned!)}`);
  console.log(`detach, no pin:     ${fmt(detach.unpinned!)}`);
  console.log(`nft -f pin alone:   ${fmt(nftAlone)}`);
  console.log(`load average:       ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim()}`);
} finally {
  const quiet = (cmd: string, args: string[]) => {
    try {
      execFileSync(cmd, args, { stdio: 'ignore' });
    } catch {
      // not there
    }
  };
  quiet('ip', ['link', 'del', BRIDGE]);
  for (const f of ['bridge', 'ip6']) quiet('nft', ['delete', 'table', f, `tarmac_${BRIDGE}`]);
  const chain = `TARMAC-IN-${BRIDGE}`.slice(0, 28);
  quiet('iptables', ['-w', '-D', 'INPUT', '-i', BRIDGE, '-j', chain]);
  quiet('iptables', ['-w', '-D', 'FORWARD', '-i', BRIDGE, '-j', 'DROP']);
  quiet('iptables', ['-w', '-D', 'FORWARD', '-o', BRIDGE, '-j', 'DROP']);
  quiet('iptables', ['-w', '-F', chain]);
  quiet('iptables', ['-w', '-X', chain]);
  rmSync(leases, { recursive: true, force: true });
}
