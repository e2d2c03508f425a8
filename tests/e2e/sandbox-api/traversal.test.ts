// Path traversal and symlinks (spec "Sandbox API": the sandbox's filesystem only): `..` in the
// URL (raw, percent-encoded, through either router style), absolute paths, and symlinks made inside
// the sandbox that point at a host path must all see only the sandbox's own filesystem. A marker
// file on the host, at a path the sandbox also has, tells the two apart by content.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  missingCapability,
  startSandboxPlatform,
} from '../sandboxes/support.js';
import { body, call, loopbackLookup, ownNetwork, STYLES, type Style } from './support.js';

const skip = missingCapability();
const NAME = 'trav-box';
const TAG = randomBytes(4).toString('hex');
const MARKER = `/tmp/tarmac-host-marker-${TAG}`;
const HOST_SECRET = `host-only-${TAG}`;
const WRITE_TARGET = `/tmp/tarmac-host-write-${TAG}`;
let p: RunningPlatform | undefined;

/** Sends the path byte for byte (fetch would normalise `..` away) and returns status and body. */
function raw(style: Style, path: string): Promise<{ status: number; text: string }> {
  const url = new URL(p!.url);
  const ws = p!.credentials.workspace;
  const fullPath = style === 'path' ? `/${ws}/sandboxes/${NAME}${path}` : path;
  const host = style === 'host' ? `sbx-${NAME}-${ws}.local.localhost:${url.port}` : url.host;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(url.port),
        path: fullPath,
        lookup: loopbackLookup,
        headers: { host, authorization: `Bearer ${p!.credentials.apiKey}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += String(c)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  if (skip) return;
  writeFileSync(MARKER, HOST_SECRET);
  p = await startSandboxPlatform({ env: ownNetwork(3) });
  await createSandbox(p, NAME);
  // The same path inside the sandbox, with other content; and symlinks that name host paths.
  const r = await exec(
    p,
    NAME,
    [
      `echo -n sandbox-view > ${MARKER}`,
      `ln -s ${MARKER} /tmp/link-abs`,
      `ln -s ../../../../../../../..${MARKER} /tmp/link-rel`,
      `ln -s /tmp /root/tmp-dir-link`,
      `ln -s ${WRITE_TARGET} /tmp/link-write`,
    ].join(' && '),
  );
  expect(r.exitCode, r.stderr ?? '').toBe(0);
}, 15 * 60_000);

afterAll(async () => {
  rmSync(MARKER, { force: true });
  rmSync(WRITE_TARGET, { force: true });
  await cleanUp(p, [NAME]);
}, 120_000);

describe.skipIf(skip)(`path traversal and symlinks${skip ? ` (skipped: ${skip})` : ''}`, () => {
  describe.each(STYLES)('%s-style', (style: Style) => {
    const enc = encodeURIComponent;
    const noHostData = (text: string) => expect(text).not.toContain(HOST_SECRET);

    it('literal and percent-encoded `..` never leave the sandbox', async () => {
      const attempts = [
        `/filesystem/../../../../../../..${MARKER}`,
        `/filesystem/..%2F..%2F..%2F..%2F..%2F..%2F..${enc(MARKER)}`,
        `/filesystem/%2E%2E/%2E%2E/%2E%2E/%2E%2E${MARKER}`,
        `/filesystem/%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E${enc(MARKER)}`,
        `/filesystem/tree/..%2F..%2F..%2F..%2Ftmp`,
        `/filesystem-find/..%2F..%2F..%2F..%2Ftmp?patterns=tarmac-host-marker-*`,
      ];
      for (const path of attempts) {
        const r = await raw(style, path);
        noHostData(r.text);
        // Either the sandbox's own file, a listing of the sandbox's /tmp, or a clean 4xx.
        expect(r.status, `${path}: ${r.text}`).toBeLessThan(500);
      }
      // Content search echoes its query, so look at its matches: none from the host.
      const search = await raw(style, `/filesystem-content-search/..%2F..%2F..%2Ftmp?query=${HOST_SECRET}`);
      expect((JSON.parse(search.text) as { matches: unknown[] }).matches).toEqual([]);
      const own = await raw(style, `/filesystem/..%2F..%2F..%2F..${enc(MARKER)}`);
      expect(own.status).toBe(200);
      expect((JSON.parse(own.text) as { content: string }).content).toBe('sandbox-view');
    });

    it('an absolute path is the sandbox’s own path', async () => {
      const r = await body<{ content: string }>(await call(p!, NAME, style, `/filesystem/${enc(MARKER)}`));
      expect(r.content).toBe('sandbox-view');
      const dl = await call(p!, NAME, style, `/filesystem/${enc(MARKER)}?download=true`);
      expect(await dl.text()).toBe('sandbox-view');
      const etc = await call(p!, NAME, style, `/filesystem/${enc('/etc/hostname')}`);
      noHostData(await etc.text());
    });

    it('symlinks inside the sandbox resolve inside the sandbox, for reads, listings and writes', async () => {
      for (const link of ['/tmp/link-abs', '/tmp/link-rel']) {
        const r = await call(p!, NAME, style, `/filesystem/${enc(link)}`);
        const text = await r.text();
        noHostData(text);
        expect(r.status, text).toBe(200);
        expect((JSON.parse(text) as { content: string }).content).toBe('sandbox-view');
      }
      const listing = await call(p!, NAME, style, `/filesystem/${enc('/root/tmp-dir-link')}`);
      noHostData(await listing.text());
      const search = await call(
        p!,
        NAME,
        style,
        `/filesystem-content-search/${enc('/tmp')}?query=${HOST_SECRET}`,
      );
      expect((await body<{ matches: unknown[] }>(search)).matches).toEqual([]);
      // Writing through a link to a host path writes the sandbox's file, never the host's.
      const put = await call(p!, NAME, style, `/filesystem/${enc('/tmp/link-write')}`, {
        method: 'PUT',
        body: JSON.stringify({ content: 'through the link' }),
      });
      expect(put.status).toBeLessThan(500);
      expect(existsSync(WRITE_TARGET)).toBe(false);
      const inside = await exec(p!, NAME, `cat ${WRITE_TARGET} 2>/dev/null || echo none`);
      expect(['through the link', 'none']).toContain(inside.stdout?.trim());
    });

    it('tree writes cannot climb out; a shell in the sandbox sees the sandbox view', async () => {
      const tree = await call(p!, NAME, style, `/filesystem/tree/${enc('/tmp/t')}`, {
        method: 'PUT',
        body: JSON.stringify({ files: { [`../../../..${WRITE_TARGET}`]: 'escape' } }),
      });
      expect(tree.status).toBe(400);
      expect(existsSync(WRITE_TARGET)).toBe(false);
      const readViaProcess = await exec(p!, NAME, `cat ${MARKER}`);
      expect(readViaProcess.stdout).toBe('sandbox-view'); // even a shell sees only the sandbox
    });
  });
});
