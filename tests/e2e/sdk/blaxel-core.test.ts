// The public platform's own TypeScript SDK, `@blaxel/core` 0.3.21 unmodified, against the real
// platform and real runc sandboxes (issue 14 "What it must show"). The SDK is pointed at the
// platform the way its settings read it: BL_API_URL (`<api>/v0`), BL_RUN_URL, BL_WORKSPACE,
// BL_API_KEY, and BL_API_VERSION for the version it pins (`Blaxel-Version`; 2026-04-28 by default).
// Every call runs under both versions the SDK may pin: its default, and the first one (bare lists).
//
// Sandbox URLs are host-style `*.localhost` names. systemd-resolved answers those with loopback
// (RFC 6761); this machine's resolver does not, so the test's fetch resolves `*.localhost` to
// loopback itself (the @tarmac/sdk helper) — the requests and their URLs are the SDK's own.
import type * as BlaxelCore from '@blaxel/core';
import { localhostFetch } from '@tarmac/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { missingCapability } from '../sandboxes/support.js';
import { startTestPlatform, stopTestPlatform } from './fixture.js';

const missing = missingCapability();
if (missing) console.warn(`blaxel-core.test.ts skipped: ${missing}`);

type Blaxel = typeof BlaxelCore;
const VERSIONS = ['2026-04-28', '2026-04-16'] as const;
const IMAGE = 'blaxel/base-image:latest';

/** globalThis.fetch that resolves `*.localhost` to loopback; the SDK passes Request objects. */
function loopbackFetch(real: typeof fetch): typeof fetch {
  const viaLoopback = localhostFetch((input, init) => real(input, init));
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    if (!new URL(req.url).hostname.endsWith('.localhost')) return real(req);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    return viaLoopback(req.url, { method: req.method, headers: req.headers, body, signal: req.signal });
  }) as typeof fetch;
}

/** The record's `state` (the SDK keeps the API's body in a private field and has no getter). */
const stateOf = (s: object): unknown => (s as unknown as { sandbox: { state?: unknown } }).sandbox.state;

describe.skipIf(missing !== null)('the vendor SDK @blaxel/core 0.3.21 against the real platform', () => {
  let platform: RunningPlatform;
  let bl: Blaxel;
  const realFetch = globalThis.fetch;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    platform = await startTestPlatform({ bridge: 'tarmacbl0', subnet: '10.150.0.0/16' });
    const c = platform.credentials;
    Object.assign(process.env, {
      BL_API_URL: `${c.apiUrl}/v0`,
      BL_RUN_URL: c.runUrl,
      BL_WORKSPACE: c.workspace,
      BL_API_KEY: c.apiKey,
      BL_DISABLE_H2: 'true',
      BL_REGION: 'local',
      DO_NOT_TRACK: '1',
    });
    globalThis.fetch = loopbackFetch(realFetch);
    bl = await import('@blaxel/core'); // reads the settings above on import (autoload)
  }, 180_000);

  afterAll(async () => {
    globalThis.fetch = realFetch;
    process.env = savedEnv;
    expect(await stopTestPlatform(platform)).toEqual([]);
  }, 180_000);

  // Item 8: `spec.enabled: false` was stored and ignored.
  it('spec.enabled: false stops serving a sandbox (DEACTIVATED, 503 saying so); true serves it again as it was', async () => {
    const sandbox = await bl.SandboxInstance.create({ name: 'toggle', image: IMAGE, memory: 512 });
    await sandbox.fs.write('/tmp/kept.txt', 'kept while disabled');
    const put = async (enabled: boolean) => {
      const current = (await (await platform.api('/v0/sandboxes/toggle')).json()) as {
        metadata: object;
        spec: object;
      };
      const res = await platform.api('/v0/sandboxes/toggle', {
        method: 'PUT',
        body: JSON.stringify({ metadata: current.metadata, spec: { ...current.spec, enabled } }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const until = async (status: string) => {
      for (let i = 0; i < 600; i++) {
        const s = (await (await platform.api('/v0/sandboxes/toggle')).json()) as { status: string };
        if (s.status === status) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`toggle never ${status}`);
    };
    const direct = () =>
      fetch(`${platform.url}/${platform.credentials.workspace}/sandboxes/toggle/filesystem/tmp/kept.txt`, {
        headers: { authorization: `Bearer ${platform.credentials.apiKey}` },
      });
    await put(false);
    await until('DEACTIVATED');
    const refused = await direct();
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: 'sandbox toggle is disabled (spec.enabled is false)' });
    await put(true);
    const served = await direct(); // held while it deploys again, then served
    expect(served.status).toBe(200);
    expect(await sandbox.fs.read('/tmp/kept.txt')).toBe('kept while disabled');
    await bl.SandboxInstance.delete('toggle');
  }, 120_000);

  describe.each(VERSIONS)('with Blaxel-Version %s', (version) => {
    const tag = version.replaceAll('-', '');
    beforeAll(() => {
      process.env.BL_API_VERSION = version;
    });

    // Item 1: the SDK documents that callers need not wait for a deploy; it retries GETs only.
    it('create, then at once fs.write and process.exec without wait(): held until live, not 503', async () => {
      const t0 = Date.now();
      const sandbox = await bl.SandboxInstance.create({ name: `now-${tag}`, image: IMAGE, memory: 512 });
      // Item 8: the create response carries state and lastUsedAt (spec "sandbox with events,
      // expiresIn, lastUsedAt, state, status"); it is still deploying when the writes go out.
      expect(sandbox.status).toBe('DEPLOYING');
      expect(stateOf(sandbox)).toBe('RUNNING');
      expect(sandbox.lastUsedAt).toBeTruthy();
      await sandbox.fs.write('/tmp/now/hello.txt', 'written before the deploy finished');
      const result = await sandbox.process.exec({
        command: 'cat /tmp/now/hello.txt',
        waitForCompletion: true,
      });
      expect([result.exitCode, result.stdout]).toEqual([0, 'written before the deploy finished']);
      console.log(`[${version}] create → first exec done in ${Date.now() - t0} ms`);
      expect((await bl.SandboxInstance.get(`now-${tag}`)).status).toBe('DEPLOYED');
    }, 180_000);

    // Item 2: delete then re-create the same name (the README tour twice; createIfNotExists).
    it('delete, then createIfNotExists of the same name succeeds at once', async () => {
      const name = `again-${tag}`;
      const first = await bl.SandboxInstance.create({ name, image: IMAGE, memory: 512 });
      await first.fs.write('/tmp/first.txt', 'first');
      await bl.SandboxInstance.delete(name);
      const gone = await bl.SandboxInstance.get(name);
      expect(['DELETING', 'TERMINATED']).toContain(gone.status);
      expect(stateOf(gone)).toBeUndefined(); // TERMINATED with state RUNNING was the bug
      const t0 = Date.now();
      const second = await bl.SandboxInstance.createIfNotExists({ name, image: IMAGE, memory: 512 });
      const took = Date.now() - t0;
      console.log(`[${version}] delete → createIfNotExists of the same name in ${took} ms`);
      expect(took).toBeLessThan(25_000); // the SDK gives up after ~30 s
      expect(second.metadata.name).toBe(name);
      expect(['DEPLOYING', 'DEPLOYED']).toContain(second.status);
      // A new sandbox, not the old one's files.
      const ls = await second.process.exec({ command: 'ls /tmp', waitForCompletion: true });
      expect(ls.stdout).not.toContain('first.txt');
      // And again, with the plain create (the README tour run twice).
      await bl.SandboxInstance.delete(name);
      const third = await bl.SandboxInstance.create({ name, image: IMAGE, memory: 512 });
      expect(third.metadata.name).toBe(name);
      await bl.SandboxInstance.delete(name);
    }, 180_000);

    // Items 3 and 4: bare-array lists, and spec.token on preview tokens.
    it('previews.list, tokens.list, and sessions create/get/list/fromSession', async () => {
      const sandbox = await bl.SandboxInstance.get(`now-${tag}`);
      await sandbox.previews.create({ metadata: { name: 'web' }, spec: { port: 8000, public: false } });
      const previews = await sandbox.previews.list();
      expect(previews.map((p) => p.name)).toContain('web');
      const preview = await sandbox.previews.get('web');
      const created = await preview.tokens.create(new Date(Date.now() + 3600_000));
      expect(created.value).toMatch(/^tpv_/);
      const tokens = await preview.tokens.list();
      expect(tokens.map((t) => t.value)).toEqual([created.value]);
      await sandbox.previews.delete('web');

      const session = await sandbox.sessions.create();
      expect(session.token).toMatch(/^tpv_/);
      const listed = await sandbox.sessions.list();
      expect(listed.map((s) => [s.name, s.token])).toContainEqual([session.name, session.token]);
      const got = await sandbox.sessions.get(session.name);
      expect([got.url, got.token]).toEqual([session.url, session.token]);
      // A session works on its own: only its URL and token, no API key.
      const viaSession = await bl.SandboxInstance.fromSession({
        ...got,
        name: session.name,
        expiresAt: new Date(got.expiresAt),
      });
      await viaSession.fs.write('/tmp/now/session.txt', 'via the session');
      expect(await viaSession.fs.read('/tmp/now/session.txt')).toBe('via the session');
      await sandbox.sessions.delete(session.name);
    }, 120_000);

    // Item 5: the SDK clears a TTL with `ttl: null`.
    it('updateTtl sets and updateTtl(null) clears the TTL', async () => {
      const set = await bl.SandboxInstance.updateTtl(`now-${tag}`, '1h');
      expect(set.spec.runtime?.ttl).toBe('1h');
      expect(set.expiresIn).toBeGreaterThan(3500);
      const cleared = await bl.SandboxInstance.updateTtl(`now-${tag}`, null as unknown as string);
      expect(cleared.spec.runtime?.ttl).toBeUndefined();
      expect(cleared.expiresIn).toBeUndefined();
    }, 60_000);

    // Item 6: POST/DELETE /process/{id}/stdin.
    it('process stdin: write raw bytes, close for EOF', async () => {
      const sandbox = await bl.SandboxInstance.get(`now-${tag}`);
      await sandbox.process.exec({ command: 'cat; echo "[eof]"', name: `cat-${tag}`, stdin: true });
      await sandbox.process.writeStdin(`cat-${tag}`, '{"jsonrpc":"2.0"}\n');
      await sandbox.process.writeStdin(`cat-${tag}`, 'second line\n');
      await sandbox.process.closeStdin(`cat-${tag}`);
      const done = await sandbox.process.wait(`cat-${tag}`, { maxWait: 30_000, interval: 200 });
      expect(done.status).toBe('completed');
      expect(await sandbox.process.logs(`cat-${tag}`, 'stdout')).toBe(
        '{"jsonrpc":"2.0"}\nsecond line\n[eof]\n',
      );
    }, 60_000);

    it('lists sandboxes (paginated from 2026-04-28, a bare array before)', async () => {
      const list = await bl.SandboxInstance.list();
      const all = await list.autoPagingToArray({ limit: 1000 });
      expect(all.map((s) => s.metadata.name)).toContain(`now-${tag}`);
    }, 60_000);
  });
});
