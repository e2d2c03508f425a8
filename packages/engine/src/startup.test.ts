// sandboxd's start-up on real runc (ARCHITECTURE.md "Start-up"): it runs through the code-cache
// loader with a cache the sandbox's node accepts, and NODE_EXTRA_CA_CERTS is kept from sandboxd's
// own process (node would build its root store at start) but reaches every process it starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalEngine } from './local-engine.js';
import { IN_SANDBOX } from './runtime-dir.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();

describe.skipIf(missing !== null)(`sandboxd start-up${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  let id = '';
  let ip = '';

  beforeAll(async () => {
    ensureSandboxdBundle();
    engine = testEngine(process.env.TARMAC_ENGINE_TEST_HOME);
    await engine.ensureImage('tarmac/base:latest');
    id = uniqueId('startup');
    const info = await engine.createSandbox({
      id,
      image: 'tarmac/base:latest',
      memoryMB: 512,
      // --max-old-space-size is a V8 flag: seen by sandboxd's node, V8 would reject its code cache.
      env: {
        NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
        NODE_OPTIONS: '--max-old-space-size=300',
      },
    });
    ip = info.ip ?? '';
    await engine.waitReady(id, 20_000);
  }, 900_000);

  afterAll(async () => {
    if (id) await engine.deleteSandbox(id).catch(() => undefined);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
  }, 60_000);

  const sh = async (script: string) =>
    (await engine.exec(id, ['sh', '-c', script], { timeoutMs: 20_000 })).stdout;

  it('sandboxd runs through the loader, whose code cache the sandbox node accepts', async () => {
    // PID 1 is tini; its child is node running the loader.
    expect(await sh('cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " "')).toContain(IN_SANDBOX.boot);
    const check = [
      "const { Script } = require('node:vm'); const fs = require('node:fs');",
      "const src = fs.readFileSync('/.tarmac/lib/sandboxd.cjs', 'utf8');",
      "const w = '(function (exports, require, module, __filename, __dirname, __tarmacImport) {' + src + '\\n})';",
      "const s = new Script(w, { cachedData: fs.readFileSync('/.tarmac/lib/sandboxd.cjs.cache') });",
      'console.log(s.cachedDataRejected);',
    ].join(' ');
    // Checked by a node started like sandboxd: without the sandbox's NODE_OPTIONS.
    const r = await engine.exec(id, [
      'env',
      '-u',
      'NODE_OPTIONS',
      '/.tarmac/lib/ld-linux-x86-64.so.2',
      '--library-path',
      IN_SANDBOX.libDir,
      IN_SANDBOX.node,
      '-e',
      check,
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('false');
  });

  it("NODE_EXTRA_CA_CERTS and NODE_OPTIONS are absent from sandboxd's env, present for its processes", async () => {
    const own = await sh(
      // The bracket keeps grep from matching this shell, whose own command line names the loader.
      `for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline | grep -q "sandboxd-boo[t]"; then tr "\\0" "\\n" < $p/environ; fi; done`,
    );
    expect(own).toContain('PATH=');
    expect(own).not.toMatch(/^NODE_EXTRA_CA_CERTS=/m);
    expect(own).not.toMatch(/^NODE_OPTIONS=/m);
    expect(await sh('echo "$NODE_EXTRA_CA_CERTS"')).toBe('/etc/ssl/certs/ca-certificates.crt\n');
    const res = await fetch(`http://${ip}:8080/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'env', waitForCompletion: true }),
    });
    const body = (await res.json()) as { stdout: string };
    expect(body.stdout).toMatch(/^NODE_EXTRA_CA_CERTS=\/etc\/ssl\/certs\/ca-certificates\.crt$/m);
    expect(body.stdout).toMatch(/^NODE_OPTIONS=--max-old-space-size=300$/m);
    expect(body.stdout).not.toContain('TARMAC_SANDBOXD_HIDDEN_');
  });
});
