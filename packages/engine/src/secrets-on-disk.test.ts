// Issue 16: a sandbox's secrets (its boot env: the user's envs, decrypted secrets, the sandboxd
// token) and a command container's (its process env) are never written to the host's disk, only
// to memory: the engine keeps its runc bundle and boot env on tmpfs (bundle-dirs.ts), even when
// the run dir is on a disk, as /run is on some hosts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleDirs, isMemoryBacked } from './bundle-dirs.js';
import type { LocalEngine } from './local-engine.js';
import { ProcessRunner } from './runner.js';
import { filesContaining } from './test-support/files-containing.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME ?? '/var/cache/tarmac-test';
/** A bridge of this file's own: other test files rewrite the shared test bridge's filters. */
const NETWORK = { bridge: 'tarmacsec0', subnet: '10.141.0.0/16' };
/** A run dir on a disk (not /run, which may be a tmpfs): the engine must still keep secrets off it. */
const RUN_DIR = '/var/lib/tarmac-test-secrets-run';

describe.skipIf(missing !== null)(
  `secrets stay off the disk${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let engine: LocalEngine;
    const created: string[] = [];

    beforeAll(async () => {
      ensureSandboxdBundle();
      engine = testEngine(home, { network: NETWORK, runcRoot: join(RUN_DIR, 'runc') });
      await engine.ensureImage('tarmac/base:latest');
      await engine.network.ensure();
    }, 900_000);

    afterAll(async () => {
      for (const c of created) await engine.deleteSandbox(c).catch(() => undefined);
      await engine.network.release().catch(() => false); // its bridge and firewall, if it made them
      execFileSync('sh', ['-c', `umount ${RUN_DIR}/bundles 2>/dev/null; true`]);
    }, 60_000);

    it("a sandbox's secret env reaches its processes and is in memory only", async () => {
      const id = uniqueId('sec');
      created.push(id);
      const secret = `s3cret-${Math.random().toString(36).slice(2)}`;
      await engine.createSandbox({
        id,
        image: 'tarmac/base:latest',
        memoryMB: 256,
        diskMB: 256,
        env: { API_KEY: secret },
      });
      await engine.waitReady(id, 15_000);
      // The process sees it (engine.exec reads the boot env from where the engine keeps it).
      expect((await engine.exec(id, ['sh', '-c', 'printf %s "$API_KEY"'])).stdout).toBe(secret);
      // Not in the sandbox's directory under home (records, logs, its disk), nor anywhere in the
      // run dir but the tmpfs holding its bundle.
      expect(filesContaining(join(home, 'sandboxes', id), secret)).toEqual([]);
      const bundle = join(RUN_DIR, 'bundles', id);
      expect(filesContaining(RUN_DIR, secret)).toEqual([join(bundle, 'boot-env.json')]);
      expect(isMemoryBacked(bundle)).toBe(true);
      expect(isMemoryBacked(RUN_DIR)).toBe(false); // the attack this guards against: a disk run dir
      expect(statSync(bundle).mode & 0o777).toBe(0o700);
      expect(statSync(join(bundle, 'config.json')).mode & 0o777).toBe(0o600);
      const info = await engine.inspect(id);
      await engine.deleteSandbox(id);
      expect(existsSync(bundle)).toBe(false);
      expect(await engine.leftovers(id, info.ip)).toEqual([]);
    }, 120_000);

    it("a command container's (job task's) secret env is in memory only", async () => {
      const id = uniqueId('seccmd');
      created.push(id);
      const secret = `t0ken-${Math.random().toString(36).slice(2)}`;
      await engine.createSandbox({
        id,
        image: 'tarmac/base:latest',
        memoryMB: 128,
        diskMB: 256,
        env: { TASK_TOKEN: secret },
        command: ['sh', '-c', 'test -n "$TASK_TOKEN" && sleep 30'],
      });
      const bundle = join(RUN_DIR, 'bundles', id);
      expect(JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')).process.env).toContain(
        `TASK_TOKEN=${secret}`,
      );
      expect(filesContaining(join(home, 'sandboxes', id), secret)).toEqual([]);
      expect(readdirSync(join(home, 'sandboxes', id))).not.toContain('bundle');
      await engine.deleteSandbox(id);
      expect(existsSync(bundle)).toBe(false);
    }, 120_000);

    it('mounts one tmpfs for every engine sharing a run dir on a disk, never one over another', async () => {
      const dir = mkdtempSync('/var/lib/tarmac-test-bundles-');
      try {
        const [a, b] = [new BundleDirs(dir, new ProcessRunner()), new BundleDirs(dir, new ProcessRunner())];
        const [da, db] = await Promise.all([a.make('one'), b.make('two')]);
        expect(isMemoryBacked(da) && isMemoryBacked(db)).toBe(true);
        // Both engines' directories are visible: a second mount would have hidden the first's.
        expect(readdirSync(join(dir, 'bundles')).sort()).toEqual(['one', 'two']);
        const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
        expect(mounts.filter((l) => l.split(' ')[4] === join(dir, 'bundles'))).toHaveLength(1);
      } finally {
        execFileSync('sh', ['-c', `umount ${dir}/bundles 2>/dev/null; true`]);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
