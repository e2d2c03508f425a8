// The two idle steps of the run plane (issue 16 `bench/run-plane.ts`, planes/run/idle-policy.ts),
// measured on the bench's agent replica after the platform restarted with short idle windows
// (TARMAC_RUN_STANDBY_AFTER_SECONDS=1, TARMAC_RUN_STOP_AFTER_SECONDS=STOP_AFTER):
//  - first request to the revision while its replica is in STANDBY (runc shows it paused) vs the
//    warm request right after it, paired, through the gateway (goal < 5 ms p99 added);
//  - first request after full scale to zero (container removed, image cached), time to first
//    byte (goal < 500 ms on this machine), with the warm request after it as the baseline.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

export interface IdleBenchTarget {
  port: number;
  path: string;
  key: string;
  home: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const payload = JSON.stringify({ inputs: 'hello' });

/** One POST through the gateway: ms to the first byte of the answer. */
function ttfb(t: IdleBenchTarget): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port: t.port,
        path: t.path,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`gateway: HTTP ${res.statusCode}`));
        res.once('data', () => resolve(performance.now() - started));
        res.resume();
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const replicas = (home: string) =>
  readdirSync(join(home, 'sandboxes')).filter((d) => d.startsWith('rp-') && !d.startsWith('.'));

function runcState(id: string): string {
  try {
    const out = execFileSync('runc', ['--root', '/run/tarmac/runc', 'state', id], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return (JSON.parse(out) as { status: string }).status;
  } catch {
    return 'gone';
  }
}

async function until(what: string, f: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !f();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface IdleSamples {
  standby: number[];
  warmAfterStandby: number[];
  cold: number[];
  warmAfterCold: number[];
}

export async function measureIdle(t: IdleBenchTarget, standbyRuns: number, coldRuns: number) {
  const out: IdleSamples = { standby: [], warmAfterStandby: [], cold: [], warmAfterCold: [] };
  await ttfb(t); // the adopted replica answers
  for (let i = 0; i < standbyRuns; i++) {
    const [id] = replicas(t.home);
    await until('the replica paused', () => id !== undefined && runcState(id) === 'paused', 15_000);
    out.standby.push(await ttfb(t));
    out.warmAfterStandby.push(await ttfb(t));
  }
  for (let i = 0; i < coldRuns; i++) {
    await until('the replica removed', () => replicas(t.home).length === 0, 30_000);
    out.cold.push(await ttfb(t));
    out.warmAfterCold.push(await ttfb(t));
  }
  agent.destroy();
  return out;
}
