// Image import: a docker-save archive and an OCI layout built here with tar, layers applied in
// order with whiteouts honoured; a sandbox runs from the result even with no libc or shell in it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refDirName } from './images/refs.js';
import type { LocalEngine } from './local-engine.js';
import { withMergedView } from './test-support/merged-view.js';
import { ensureSandboxdBundle, missingCapability, testEngine, uniqueId } from './test-support/harness.js';

const missing = missingCapability();
const home = process.env.TARMAC_ENGINE_TEST_HOME;

/** Writes files (path -> content) into a fresh dir and tars it; returns the tar path. */
function layer(work: string, name: string, files: Record<string, string>, gzip = false): string {
  const dir = join(work, `${name}-src`);
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), content);
  }
  const out = join(work, `${name}.tar${gzip ? '.gz' : ''}`);
  execFileSync('tar', [gzip ? '-czf' : '-cf', out, '-C', dir, '.']);
  return out;
}

const LAYER1 = { 'hello.txt': 'bye soon', 'keep.txt': 'kept', 'dir/a': 'a', 'dir/b': 'b', 'app/.keep': '' };
const LAYER2 = { '.wh.hello.txt': '', 'dir/.wh..wh..opq': '', 'dir/c': 'c', 'keep.txt': 'kept v2' };
const CONFIG = {
  config: { Env: ['PATH=/bin', 'FOO=bar'], WorkingDir: '/app', Entrypoint: ['/bin/run'], Cmd: ['--now'] },
};

function dockerSave(work: string): string {
  const root = join(work, 'docker');
  mkdirSync(join(root, 'l1'), { recursive: true });
  mkdirSync(join(root, 'l2'), { recursive: true });
  execFileSync('cp', [layer(work, 'd1', LAYER1), join(root, 'l1/layer.tar')]);
  execFileSync('cp', [layer(work, 'd2', LAYER2), join(root, 'l2/layer.tar')]);
  writeFileSync(join(root, 'config.json'), JSON.stringify(CONFIG));
  writeFileSync(
    join(root, 'manifest.json'),
    JSON.stringify([
      { Config: 'config.json', RepoTags: ['test/tiny:1'], Layers: ['l1/layer.tar', 'l2/layer.tar'] },
    ]),
  );
  const out = join(work, 'docker-save.tar');
  execFileSync('tar', ['-cf', out, '-C', root, '.']);
  return out;
}

function ociLayout(work: string): string {
  const root = join(work, 'oci');
  const blobs = join(root, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const put = (data: Buffer) => {
    const hex = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: data.length };
  };
  const l1 = put(readFileSync(layer(work, 'o1', LAYER1, true)));
  const l2 = put(readFileSync(layer(work, 'o2', LAYER2, true)));
  const config = put(Buffer.from(JSON.stringify(CONFIG)));
  const manifest = put(Buffer.from(JSON.stringify({ schemaVersion: 2, config, layers: [l1, l2] })));
  writeFileSync(join(root, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  writeFileSync(join(root, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
  const out = join(work, 'oci.tar');
  execFileSync('tar', ['-cf', out, '-C', root, '.']);
  return out;
}

describe.skipIf(missing !== null)(`image import${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let engine: LocalEngine;
  let work = '';
  const refs: string[] = [];
  const sandboxes: string[] = [];

  beforeAll(() => {
    ensureSandboxdBundle();
    engine = testEngine(home);
    work = mkdtempSync(join(tmpdir(), 'tarmac-import-'));
  });

  afterAll(async () => {
    for (const id of sandboxes) await engine.deleteSandbox(id).catch(() => undefined);
    for (const r of refs) engine.images.remove(r);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  for (const [kind, build] of [
    ['docker save', dockerSave],
    ['OCI layout (gzip layers)', ociLayout],
  ] as const) {
    it(`imports a ${kind} archive, applying layers in order with whiteouts`, async () => {
      const ref = `test/${uniqueId('tiny')}:1`;
      refs.push(ref);
      const img = await engine.importImage(build(work), ref);
      // Two layers, each an overlay lower of its own (images/layer-store.ts).
      expect(img).toMatchObject({ ref, layers: 2 });
      const { layerDirs } = engine.images.resolve(ref);
      // The image's command, what a job task runs (SandboxSpec.command), kept in the store.
      expect(engine.images.resolve(ref)).toMatchObject({ entrypoint: ['/bin/run'], cmd: ['--now'] });
      // Size: the layers' apparent bytes (files plus directory entries), measured at import and
      // stored in image.json, so later reads do not walk the layers again.
      const du = execFileSync('du', ['-s', '-b', '-c', ...layerDirs], { encoding: 'utf8' });
      const duBytes = Number(/^(\d+)\s+total$/m.exec(du)?.[1]);
      expect(img.sizeBytes).toBe(duBytes);
      expect(img.sizeBytes).toBeGreaterThanOrEqual(8);
      const images = join(layerDirs[0] ?? '', '..', '..', '..');
      const manifestPath = join(images, refDirName(ref), 'image.json');
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
      expect(manifest.sizeBytes).toBe(img.sizeBytes);
      // An image stored before sizes existed is measured on first read and its manifest rewritten.
      delete manifest.sizeBytes;
      writeFileSync(manifestPath, JSON.stringify(manifest));
      expect((await engine.ensureImage(ref)).sizeBytes).toBe(duBytes);
      expect((JSON.parse(readFileSync(manifestPath, 'utf8')) as { sizeBytes?: number }).sizeBytes).toBe(
        duBytes,
      );
      withMergedView(layerDirs, (root) => {
        const ls = (p: string) =>
          execFileSync('ls', ['-A', join(root, p)], { encoding: 'utf8' })
            .split('\n')
            .filter(Boolean);
        expect(ls('.').sort()).toEqual(['app', 'dir', 'keep.txt']); // hello.txt whited out
        expect(ls('dir')).toEqual(['c']); // opaque dir: a and b gone
        expect(readFileSync(join(root, 'keep.txt'), 'utf8')).toBe('kept v2');
      });

      // Runs with no libc and no shell in the image: the runtime is injected.
      const id = uniqueId('imported');
      sandboxes.push(id);
      const info = await engine.createSandbox({ id, image: ref, memoryMB: 512 });
      await engine.waitReady(id, 15_000);
      expect(await (await fetch(`http://${info.ip}:8080/health`)).json()).toMatchObject({ status: 'ok' });
      const loader = (await engine.exec(id, ['/.tarmac/bin/tini', '--version'])).stdout;
      expect(loader).toContain('tini');
      const env = readFileSync(`/proc/${info.pid}/environ`, 'utf8').split('\0');
      expect(env).toContain('FOO=bar');
      expect(readFileSync(`/proc/${info.pid}/root/keep.txt`, 'utf8')).toBe('kept v2');
      expect(readlinkSync(`/proc/${info.pid}/cwd`)).toBe('/app'); // the image's WorkingDir
    }, 60_000);
  }

  it('an unknown archive is rejected', async () => {
    const junk = join(work, 'junk.tar');
    execFileSync('tar', ['-cf', junk, '-C', work, 'o1-src']);
    await expect(engine.importImage(junk, 'test/junk:1')).rejects.toThrow(
      /not a docker-save archive or OCI layout/,
    );
  });
});
