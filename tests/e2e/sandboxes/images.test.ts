// Issue 4 "Images": POST /v0/images/import takes a raw docker-save archive (built here with tar),
// and a sandbox then runs from the imported ref — an image with no libc or shell, since sandboxd
// runs on the injected runtime. Bad requests get the management error vocabulary.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  IMAGE_CACHE,
  json,
  missingCapability,
  sbx,
  startSandboxPlatform,
} from './support.js';

const missing = missingCapability();

function dockerSave(work: string, ref: string): string {
  const src = join(work, 'layer');
  mkdirSync(join(src, 'app'), { recursive: true });
  writeFileSync(join(src, 'app/hello.txt'), 'hello from an imported image\n');
  const root = join(work, 'archive');
  mkdirSync(join(root, 'l1'), { recursive: true });
  execFileSync('tar', ['-cf', join(root, 'l1/layer.tar'), '-C', src, '.']);
  writeFileSync(
    join(root, 'config.json'),
    JSON.stringify({ config: { Env: ['GREETING=hi'], WorkingDir: '/app' } }),
  );
  writeFileSync(
    join(root, 'manifest.json'),
    JSON.stringify([{ Config: 'config.json', RepoTags: [ref], Layers: ['l1/layer.tar'] }]),
  );
  const out = join(work, 'image.tar');
  execFileSync('tar', ['-cf', out, '-C', root, '.']);
  return out;
}

describe.skipIf(missing !== null)(`image import${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const work = mkdtempSync(join(tmpdir(), 'tarmac-img-'));
  // A per-run ref: the image store is shared by every e2e home (IMAGE_CACHE).
  const ref = `e2e/tiny-${process.pid}:1`;

  beforeAll(async () => {
    p = await startSandboxPlatform();
  }, 15 * 60_000);

  afterAll(async () => {
    await cleanUp(p, ['imported']);
    rmSync(work, { recursive: true, force: true });
    // The import, stored under this run's workspace namespace (ws-<id>/<ref>) in the shared cache.
    for (const d of readdirSync(IMAGE_CACHE)) {
      if (decodeURIComponent(d).endsWith(`/${ref}`))
        rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
    }
  }, 120_000);

  it('imports a docker-save archive sent as the raw body and runs a sandbox from it', async () => {
    const archive = readFileSync(dockerSave(work, ref));
    const res = await p!.api(`/v0/images/import?ref=${encodeURIComponent(ref)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: archive,
    });
    const body = await json<{ ref: string; layers: number }>(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ ref, layers: 1 });

    await createSandbox(p!, 'imported', {}, { image: ref });
    // Relative to sandboxd's working directory: the image's WorkingDir (/app) is honoured.
    const file = await sbx(p!, 'imported', '/filesystem/hello.txt');
    expect(file.status).toBe(200);
    expect(await file.text()).toContain('hello from an imported image');
  });

  it('answers bad requests in the management error vocabulary', async () => {
    const noRef = await p!.api('/v0/images/import', {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: 'x',
    });
    expect(noRef.status).toBe(400);
    expect(await json(noRef)).toMatchObject({ error: 'validation_error', code: 400 });
    const notTar = await p!.api(`/v0/images/import?ref=${encodeURIComponent(ref)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: 'this is not an archive',
    });
    expect(notTar.status).toBe(400);
    const json415 = await p!.api(`/v0/images/import?ref=x/y:1`, { method: 'POST', body: '{}' });
    expect(json415.status).toBe(415);
    const anon = await fetch(`${p!.url}/v0/images/import?ref=x/y:1`, { method: 'POST', body: 'x' });
    expect(anon.status).toBe(401);
  });
});
