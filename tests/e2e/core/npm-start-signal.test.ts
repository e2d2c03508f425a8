// Issue 14 item 9: SIGINT to the `npm start` process did nothing for 15 s. Cause: npm forwards
// SIGINT/SIGTERM to its script's shell, and sh, waiting on `node ... up`, keeps waiting (the
// child got no signal). The script now `exec`s the CLI, so npm signals the CLI, which forwards to
// the platform. Here: `npm start` as a user runs it, with an idle keep-alive connection, a
// connection stuck mid-headers and (where sandboxes can run) a live sandbox; the signal to npm's
// pid stops everything within ~2 s, and no process of its group is left.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, freePort, removeHome, type RunningPlatform } from '../support/platform.js';
import { startTestPlatform, stopTestPlatform } from '../sdk/fixture.js';
import { createSandbox, IMAGE_CACHE, missingCapability } from '../sandboxes/support.js';

const NETWORK = { bridge: 'tarmacsig0', subnet: '10.161.0.0/16' };
const missing = missingCapability();
if (missing) console.warn(`npm-start-signal.test.ts: runs without a live sandbox: ${missing}`);

interface Started {
  npm: ChildProcess;
  port: number;
  home: string;
  output: () => string;
}

async function npmStart(home: string): Promise<Started> {
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      TARMAC_HOME: home,
      TARMAC_PORT: String(port),
      TARMAC_EGRESS_PORT: String(await freePort()),
      TARMAC_IMAGE_DIR: IMAGE_CACHE,
      TARMAC_BRIDGE: NETWORK.bridge,
      TARMAC_SUBNET: NETWORK.subnet,
      TARMAC_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, checked empty afterwards
  });
  let output = '';
  npm.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  npm.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 300_000; // `npm start` builds first
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}):\n${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok && existsSync(join(home, 'credentials.json'))) break;
    if (Date.now() > deadline) throw new Error(`npm start did not become healthy:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { npm, port, home, output: () => output };
}

/** Connections a stopping server must not wait for: idle keep-alive, and headers never finished. */
async function holdConnections(port: number): Promise<{ release: () => void }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await new Promise<void>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/health', agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end();
  });
  const partial: Socket = connect(port, '127.0.0.1');
  partial.on('error', () => undefined);
  await new Promise((r) => partial.once('connect', r));
  partial.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  return {
    release: () => {
      agent.destroy();
      partial.destroy();
    },
  };
}

async function signalAndMeasure(started: Started, signal: NodeJS.Signals): Promise<number> {
  const exited = new Promise<void>((resolve) => started.npm.once('exit', () => resolve()));
  const t0 = performance.now();
  started.npm.kill(signal); // npm's pid only, as `kill -INT <pid>` would
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 15_000)),
  ]);
  if (timedOut) {
    // The old behaviour: nothing stops. Kill the group so the next test (and the clean-up) can run.
    process.kill(-(started.npm.pid ?? 0), 'SIGKILL');
    throw new Error(`npm start still running 15 s after ${signal}:\n${started.output()}`);
  }
  const ms = performance.now() - t0;
  const refused = await fetch(`http://127.0.0.1:${started.port}/health`).then(
    () => false,
    () => true,
  );
  if (!refused) {
    try {
      process.kill(-(started.npm.pid ?? 0), 'SIGKILL'); // npm left it behind: do not leave it running
    } catch {
      // gone meanwhile
    }
  }
  expect(refused, 'the platform still answers after npm exited').toBe(true);
  const group = spawnSync('ps', ['-o', 'pid=,args=', '-g', String(started.npm.pid)], { encoding: 'utf8' });
  // Zombies are not running: `npm run build`'s esbuild service may not be reaped yet.
  const running = group.stdout.split('\n').filter((l) => l.trim() && !l.includes('<defunct>'));
  expect(running, 'processes of npm start left running').toEqual([]);
  return ms;
}

describe('signals to the `npm start` process', () => {
  const homes: string[] = [];
  const home = () => {
    const dir = mkdtempSync(join(tmpdir(), 'tarmac-npmstart-'));
    homes.push(dir);
    return dir;
  };
  let liveHome: string | undefined;
  afterAll(async () => {
    // A stopped platform leaves its sandboxes running (restart safety): start it again on the same
    // home to delete them, then stop it for good (removes the home). Also when an assertion failed.
    if (liveHome) {
      const cleanup = await startTestPlatform(NETWORK, { home: liveHome });
      homes.splice(homes.indexOf(liveHome), 1);
      expect(await stopTestPlatform(cleanup)).toEqual([]);
    }
    homes.forEach(removeHome);
  }, 180_000);

  it('SIGINT stops the platform within ~2 s, with held connections and a live sandbox', async () => {
    const started = await npmStart(home());
    if (!missing) {
      liveHome = started.home;
      const credentials = JSON.parse(readFileSync(join(started.home, 'credentials.json'), 'utf8')) as {
        apiKey: string;
      };
      const url = `http://127.0.0.1:${started.port}`;
      await createSandbox(
        {
          api: (path, init = {}) =>
            fetch(`${url}${path}`, {
              ...init,
              headers: { authorization: `Bearer ${credentials.apiKey}`, 'content-type': 'application/json' },
            }),
        } as RunningPlatform,
        'npm-start-live',
      );
    }
    const held = await holdConnections(started.port);
    const ms = await signalAndMeasure(started, 'SIGINT');
    held.release();
    console.log(`npm start: SIGINT to exit ${ms.toFixed(0)} ms`);
    expect(ms, started.output()).toBeLessThan(2500);
  }, 400_000);

  it('SIGTERM stops it within ~2 s too', async () => {
    const started = await npmStart(home());
    const held = await holdConnections(started.port);
    const ms = await signalAndMeasure(started, 'SIGTERM');
    held.release();
    console.log(`npm start: SIGTERM to exit ${ms.toFixed(0)} ms`);
    expect(ms, started.output()).toBeLessThan(2500);
  }, 400_000);
});
