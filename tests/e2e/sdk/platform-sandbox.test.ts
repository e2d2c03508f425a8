// The SDK's sandbox surface through the real platform: a real sandbox (runc, sandboxd inside),
// reached at its host-style `sbx-<name>-<ws>.<region>.localhost` URL that the SDK resolves to
// loopback itself, plus `/port/{n}`, previews, sessions and the terminal through the gateway.
// Needs what real sandboxes need (root, runc, the engine tools); skipped, saying which, without.
import { NotFoundError, Sandbox, type Tarmac } from '@tarmac/sdk';
import { createClient, localhostFetch } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { missingCapability } from '../sandboxes/support.js';
import { startTestPlatform, stopTestPlatform } from './fixture.js';

const missing = missingCapability();
if (missing) console.warn(`platform-sandbox.test.ts skipped: ${missing}`);

describe.skipIf(missing !== null)('SDK sandbox methods against the real platform', () => {
  let platform: RunningPlatform;
  let tarmac: Tarmac;
  let sandbox: Sandbox;

  beforeAll(async () => {
    // Its own bridge and subnet, so it can run while other sandbox e2e files hold theirs.
    platform = await startTestPlatform({ bridge: 'tarmacsdk0', subnet: '10.232.0.0/16' });
    tarmac = await createClient({ env: {}, home: platform.home });
    sandbox = await Sandbox.create(
      { name: 'sdk-box', memory: 512, ports: [8000], envs: { GREETING: 'hi' } },
      tarmac,
    );
    const seen: string[] = [];
    await sandbox.waitFor('DEPLOYED', { timeoutMs: 120_000, onStatus: (s) => seen.push(s) });
    expect(seen.at(-1)).toBe('DEPLOYED');
  }, 180_000);
  afterAll(async () => {
    expect(await stopTestPlatform(platform)).toEqual([]);
  }, 120_000);

  it('has a host-style *.localhost URL that the SDK reaches without DNS set-up', () => {
    // The name's "-" is doubled in the host label (issue 19 item 12).
    expect(sandbox.url).toMatch(/^http:\/\/sbx-sdk--box-default\.[a-z0-9-]+\.localhost:\d+$/);
  });

  it('reads and writes files and runs processes with live output', async () => {
    await sandbox.fs.write('/tmp/sdk/hello.txt', 'from the sdk');
    expect(await sandbox.fs.read('/tmp/sdk/hello.txt')).toBe('from the sdk');
    expect((await sandbox.fs.ls('/tmp/sdk')).files.map((f) => f.name)).toEqual(['hello.txt']);
    const out: string[] = [];
    const err: string[] = [];
    const result = await sandbox.process.exec({
      command: 'cat /tmp/sdk/hello.txt; echo " $GREETING"; echo warn >&2; exit 3',
      waitForCompletion: true,
      // Chunks arrive as the program writes them; only their concatenation is defined.
      onLog: (chunk, stream) => (stream === 'stdout' ? out : err).push(chunk),
    });
    expect(result.exitCode).toBe(3);
    expect([out.join(''), err.join('')]).toEqual(['from the sdk hi\n', 'warn\n']);
  });

  it('serves a port inside the sandbox through a public preview', async () => {
    await sandbox.fs.write('/tmp/www/index.html', 'served from the sandbox');
    await sandbox.process.exec({
      command: 'python3 -m http.server 8000 --bind 0.0.0.0 --directory /tmp/www',
      name: 'web',
      waitForPorts: [8000],
      timeout: 30,
    });
    const preview = await sandbox.previews.create({ name: 'web', port: 8000, public: true });
    const viaPreview = await localhostFetch()(`${preview.spec.url}/index.html`);
    expect([viaPreview.status, await viaPreview.text()]).toEqual([200, 'served from the sandbox']);
    await sandbox.previews.delete('web');
  });

  // The gateway routes `{sandbox_url}/port/{n}/...` to port n inside the sandbox (reference
  // sandbox-api.md §1.10).
  it('fetches a port inside the sandbox through /port/{n} on the sandbox URL', async () => {
    const direct = await sandbox.fetch(8000, '/index.html');
    expect([direct.status, await direct.text()]).toEqual([200, 'served from the sandbox']);
    await sandbox.process.kill('web');
  });

  it('hands out a session (private preview of the sandbox API + token) usable on its own', async () => {
    const session = await sandbox.sessions.create();
    const viaSession = Sandbox.fromSession(session, tarmac);
    expect((await viaSession.fs.ls('/tmp/sdk')).files.map((f) => f.name)).toEqual(['hello.txt']);
    await sandbox.sessions.delete(session.name);
  });

  it('opens a terminal through the gateway', async () => {
    const terminal = await sandbox.terminal.connect({ cols: 90, rows: 20, sessionId: 'sdk-test' });
    let screen = '';
    terminal.onData((d) => (screen += d));
    terminal.write('echo term-$((20+22))\r');
    await expect.poll(() => screen, { timeout: 15_000 }).toContain('term-42');
    terminal.close();
  });

  it('lists, deletes and waits until the sandbox is gone', async () => {
    expect((await tarmac.sandboxes.list().all()).map((s) => s.name)).toContain('sdk-box');
    await sandbox.delete();
    await sandbox.waitFor('TERMINATED', { timeoutMs: 60_000 });
    await expect(sandbox.fs.read('/tmp/sdk/hello.txt')).rejects.toBeInstanceOf(Error);
    await expect(Sandbox.get('never-made', tarmac)).rejects.toBeInstanceOf(NotFoundError);
  }, 90_000);
});
