// Issue 19 items 1 and 2, end to end against the built platform and real runc sandboxes.
// Item 1: a hostile docker-save archive (a layer symlink to a host dir, then a layer writing and a
// whiteout deleting through it; a symlinked manifest.json) sent to POST /v0/images/import gets a
// 400 that quotes nothing of the host, and the canary dir on the host is untouched.
// Item 2: two workspaces importing the same ref get two images (a sandbox in each sees its own),
// and a workspace cannot run another's image unless it was shared into it.
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  IMAGE_CACHE,
  json,
  missingCapability,
  startSandboxPlatform,
  waitFor,
  type SandboxView,
} from '../sandboxes/support.js';

const missing = missingCapability();
const SECRET = 'image-import-canary-secret: root:x:0:0';
const OTHER = 'e2e-img-other';

/** A docker-save archive from layer dirs; `members[i]` names what layer i holds (tar's own order). */
function dockerSave(work: string, name: string, layers: { dir: string; members: string[] }[]): string {
  const root = join(work, `${name}-archive`);
  mkdirSync(root, { recursive: true });
  const names = layers.map((l, i) => {
    mkdirSync(join(root, `l${i}`));
    // Members named one by one: no directory entry precedes them (a real attack's layer).
    execFileSync('tar', ['--no-recursion', '-cf', join(root, `l${i}/layer.tar`), '-C', l.dir, ...l.members]);
    return `l${i}/layer.tar`;
  });
  writeFileSync(join(root, 'config.json'), JSON.stringify({ config: { WorkingDir: '/app' } }));
  writeFileSync(join(root, 'manifest.json'), JSON.stringify([{ Config: 'config.json', Layers: names }]));
  const out = join(work, `${name}.tar`);
  execFileSync('tar', ['-cf', out, '-C', root, '.']);
  return out;
}

/** An image whose /app/who.txt says `who`. */
function imageSaying(work: string, name: string, who: string): string {
  const dir = join(work, `${name}-src`);
  mkdirSync(join(dir, 'app'), { recursive: true });
  writeFileSync(join(dir, 'app/who.txt'), who);
  return dockerSave(work, name, [{ dir, members: ['app', 'app/who.txt'] }]);
}

describe.skipIf(missing !== null)(`image import boundary${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const work = mkdtempSync(join(tmpdir(), 'tarmac-e2e-imgb-'));
  const canary = join(work, 'canary');
  const victim = join(canary, 'victim');
  const tag = `${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
  const same = `e2e/same-${tag}:1`;
  const onlyA = `e2e/only-a-${tag}:1`;
  /** [workspace, name] of every sandbox this file creates (deleted in afterAll). */
  const sandboxes: [string, string][] = [];

  const importInto = (workspace: string, ref: string, archive: string | Buffer) =>
    p!.api(`/v0/images/import?workspace=${workspace}&ref=${encodeURIComponent(ref)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: typeof archive === 'string' ? readFileSync(archive) : archive,
    });

  async function createIn(workspace: string, name: string, image: string): Promise<Response> {
    return p!.api(`/v0/sandboxes?workspace=${workspace}`, {
      method: 'POST',
      body: JSON.stringify({ metadata: { name }, spec: { runtime: { image, memory: 512 } } }),
    });
  }

  async function deployedIn(workspace: string, name: string, image: string): Promise<void> {
    sandboxes.push([workspace, name]);
    const res = await createIn(workspace, name, image);
    expect(res.status, await res.clone().text()).toBe(200);
    const s = await waitFor(`${name} DEPLOYED`, async () => {
      const v = await json<SandboxView>(await p!.api(`/v0/sandboxes/${name}?workspace=${workspace}`));
      return v.status === 'DEPLOYED' || v.status === 'FAILED' ? v : undefined;
    });
    expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
  }

  async function whoIn(workspace: string, name: string): Promise<string> {
    const res = await fetch(`${p!.url}/${workspace}/sandboxes/${name}/filesystem/who.txt`, {
      headers: { authorization: `Bearer ${p!.credentials.apiKey}` },
    });
    expect(res.status).toBe(200);
    return (await json<{ content: string }>(res)).content;
  }

  function expectCanaryUntouched(): void {
    expect(readdirSync(canary)).toEqual(['victim']);
    expect(readFileSync(victim, 'utf8')).toBe(SECRET);
    expect(statSync(victim).nlink).toBe(1);
  }

  beforeAll(async () => {
    mkdirSync(canary);
    writeFileSync(victim, SECRET);
    // A 2 MB archive cap (TARMAC_IMAGE_MAX_ARCHIVE_MB) so the size test need not send gigabytes.
    p = await startSandboxPlatform({ env: { TARMAC_IMAGE_MAX_ARCHIVE_MB: '2' } });
    const created = await p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: OTHER }) });
    expect(created.status, await created.clone().text()).toBe(200);
  }, 15 * 60_000);

  afterAll(async () => {
    // With two workspaces the admin must name one on every call (cleanUp's helpers do not).
    const mine: [string, string][] = [...sandboxes];
    for (const [workspace, name] of mine) {
      await p
        ?.api(`/v0/sandboxes/${name}?workspace=${workspace}`, { method: 'DELETE' })
        .catch(() => undefined);
    }
    if (p && mine.length > 0) {
      await waitFor(
        'the sandboxes TERMINATED',
        async () => {
          for (const [workspace, name] of mine) {
            const res = await p!.api(`/v0/sandboxes/${name}?workspace=${workspace}`);
            if (res.status === 200 && (await json<SandboxView>(res)).status !== 'TERMINATED')
              return undefined;
          }
          return true;
        },
        60_000,
      ).catch(() => undefined);
    }
    await cleanUp(p, []);
    // Our images in the shared cache (namespaced by this run's workspace ids; the tag is ours).
    for (const d of readdirSync(IMAGE_CACHE)) {
      if (decodeURIComponent(d).includes(tag)) rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
    }
    rmSync(work, { recursive: true, force: true });
  }, 180_000);

  it('a layer writing and deleting through a symlink to a host dir is a 400, and the host is untouched', async () => {
    const l1 = join(work, 'l1');
    mkdirSync(l1);
    symlinkSync(canary, join(l1, 'esc'));
    const l2 = join(work, 'l2');
    mkdirSync(join(l2, 'esc'), { recursive: true });
    writeFileSync(join(l2, 'esc/new'), 'pwned');
    writeFileSync(join(l2, 'esc/.wh.victim'), '');
    for (const members of [['esc/new'], ['esc/.wh.victim']]) {
      const archive = dockerSave(work, `attack-${members[0]!.replace(/\W/g, '')}`, [
        { dir: l1, members: ['esc'] },
        { dir: l2, members },
      ]);
      const res = await importInto(p!.credentials.workspace, `e2e/attack-${tag}:1`, archive);
      const body = await json<{ error: string; message: string }>(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.message).toMatch(/symlink/);
      expect(JSON.stringify(body)).not.toContain('canary-secret');
      expectCanaryUntouched();
    }
  });

  it('a symlinked manifest.json is a 400 that quotes nothing of the file it points at', async () => {
    const root = join(work, 'symlinked-manifest');
    mkdirSync(root);
    symlinkSync(victim, join(root, 'manifest.json'));
    const archive = join(work, 'symlinked-manifest.tar');
    execFileSync('tar', ['-cf', archive, '-C', root, '.']);
    const res = await importInto(p!.credentials.workspace, `e2e/attack-${tag}:2`, archive);
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(text).not.toContain('canary-secret');
    expect(text).not.toContain('root:x');
    expectCanaryUntouched();
  });

  it('an archive over the size cap is a 413 while it streams, with or without a length, and nothing stays spooled', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const withLength = await importInto(p!.credentials.workspace, `e2e/big-${tag}:1`, big);
    expect(withLength.status).toBe(413);
    // Chunked: no Content-Length to check first, so the stream itself is counted (not buffered).
    const chunks = Array.from({ length: 48 }, () => big.subarray(0, 64 * 1024));
    const chunked = await p!.api(
      `/v0/images/import?workspace=${p!.credentials.workspace}&ref=${encodeURIComponent(`e2e/big-${tag}:2`)}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-tar' },
        body: new ReadableStream({
          pull(controller) {
            const next = chunks.shift();
            if (next) controller.enqueue(next);
            else controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit,
    );
    const body = await chunked.text();
    expect(chunked.status, body).toBe(413);
    expect(body).toContain('larger than 2097152 bytes');
    expect(readdirSync(join(p!.home, 'images-spool'))).toEqual([]);
  });

  it('two workspaces importing the same ref get two images; a sandbox in each sees its own', async () => {
    const ws = p!.credentials.workspace;
    const a = await importInto(ws, same, imageSaying(work, 'same-a', 'workspace A'));
    expect(a.status, await a.clone().text()).toBe(200);
    expect(await a.json()).toMatchObject({ ref: same, layers: 1 });
    // The attack of issue 19 item 2: an admin of another workspace imports the same ref.
    const b = await importInto(OTHER, same, imageSaying(work, 'same-b', 'workspace B'));
    expect(b.status, await b.clone().text()).toBe(200);

    await deployedIn(ws, 'img-a', same);
    await deployedIn(OTHER, 'img-b-own', same);
    expect(await whoIn(ws, 'img-a')).toBe('workspace A');
    expect(await whoIn(OTHER, 'img-b-own')).toBe('workspace B');
    // Nor can a workspace replace the built-in base image that every workspace reads.
    const base = await importInto(OTHER, 'tarmac/base:latest', imageSaying(work, 'fake-base', 'x'));
    expect(base.status).toBe(400);
  });

  it("a workspace cannot run another workspace's image until it is shared into it", async () => {
    const ws = p!.credentials.workspace;
    const imported = await importInto(ws, onlyA, imageSaying(work, 'only-a', 'shared from A'));
    expect(imported.status, await imported.clone().text()).toBe(200);
    const record = `sandboxes/only-a-${tag}:1`;

    // Neither by its ref nor by the record's name while it is not shared.
    const byRef = await createIn(OTHER, 'img-b-denied', onlyA);
    expect(byRef.status).toBe(400);
    expect(await byRef.json()).toMatchObject({ code: 400 });
    const registered = await p!.api(`/v0/images?workspace=${ws}`, {
      method: 'POST',
      body: JSON.stringify({ resourceType: 'sandboxes', name: `only-a-${tag}`, image: onlyA }),
    });
    expect(registered.status, await registered.clone().text()).toBe(200);
    expect((await createIn(OTHER, 'img-b-denied', record)).status).toBe(400);

    // Shared (same account: applied at once, spec rule 3): the record now resolves in B to A's image.
    const shared = await p!.api(`/v0/images/sandboxes/only-a-${tag}/share?workspace=${ws}`, {
      method: 'POST',
      body: JSON.stringify({ targetWorkspace: OTHER }),
    });
    expect(shared.status, await shared.clone().text()).toBe(200);
    await deployedIn(OTHER, 'img-b-shared', record);
    expect(await whoIn(OTHER, 'img-b-shared')).toBe('shared from A');
    // The bare ref still names only B's own images.
    expect((await createIn(OTHER, 'img-b-denied', onlyA)).status).toBe(400);
  });
});
