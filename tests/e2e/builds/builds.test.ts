// Issue 15 end to end, on the real platform binary with real buildah builds into the engine's
// image store: the three example folders deployed by `tarmac deploy` and by the raw `?upload=true`
// API (zip and tar.gz), their tags and sizes in /v0/images, the UPLOADING/BUILDING/BUILT events,
// a broken Dockerfile FAILED with its failing line (CLI exit non-zero), upload URLs reused or
// expired refused with 403, an over-limit upload 413, and a zip-slip upload refused with nothing
// written outside the build folder.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarGzOf, zipOf, type Member } from '../../../apps/platform/src/planes/builds/test-archives.js';
import { systemClock } from '../../../packages/engine/src/clock.js';
import { ImageStore } from '../../../packages/engine/src/images/image-store.js';
import { ProcessRunner } from '../../../packages/engine/src/runner.js';
import { cliEnv, runCli } from '../cli/cli-runner.js';
import { REPO_ROOT, removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';
import { IMAGE_CACHE, missingBuildCapability } from '../sandboxes/support.js';
import { buildStatus } from './build-status.js';
import { removeRunWorkloads } from '../support/run-workloads.js';

const missing = (): string | null => missingBuildCapability();
const skip = missing();
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const EXAMPLES = join(REPO_ROOT, 'examples');
const BUILD_MS = 6 * 60_000;

interface Record_ {
  status: string;
  spec: { runtime?: { image?: string } };
  events: Array<{ type?: string; status: string; message: string }>;
}
interface ImageView {
  metadata: { name: string; resourceType: string; status: string };
  spec: { size: number; tags: Array<{ name: string; size: number }> };
}

describe.skipIf(skip !== null)(`builds${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let p: RunningPlatform;
  let env: Record<string, string>;
  const work = mkdtempSync(join(tmpdir(), 'i15-e2e-'));
  let workspaceId = '';

  // An operator CA (as NODE_EXTRA_CA_CERTS): trusted inside build steps, never written into a layer.
  const caFile = join(work, 'operator-ca.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=i15 operator CA',
      '-keyout',
      join(work, 'ca.key'),
      '-out',
      caFile,
    ],
    { stdio: 'ignore' },
  );
  const caLine = () => execFileSync('sed', ['-n', '2p', caFile], { encoding: 'utf8' }).trim();

  beforeAll(async () => {
    p = await startPlatform({
      timeoutMs: 15 * 60_000,
      env: {
        TARMAC_IMAGE_DIR: IMAGE_CACHE,
        TARMAC_BRIDGE: 'tmi15b0',
        TARMAC_SUBNET: '10.171.0.0/16',
        TARMAC_BUILD_URL_TTL_SECONDS: '10',
        TARMAC_BUILD_UPLOAD_MAX_MB: '1',
        TARMAC_BUILD_NETWORK: 'none',
        TARMAC_BUILD_GC_INTERVAL_SECONDS: '2',
        TARMAC_BUILD_LAYER_GC_GRACE_SECONDS: '5',
        NODE_EXTRA_CA_CERTS: caFile,
      },
    });
    env = cliEnv({
      TARMAC_API_URL: p.url,
      TARMAC_API_KEY: p.credentials.apiKey,
      TARMAC_WORKSPACE: p.credentials.workspace,
    });
    const ws = (await (await api(`/v0/workspaces/${p.credentials.workspace}`)).json()) as { id?: string };
    workspaceId = ws.id ?? '';
  }, 15 * 60_000);

  afterAll(async () => {
    // Built agents and functions have replicas now (issue 16); they outlive a stop by design.
    if (p) await removeRunWorkloads(p).catch((err: unknown) => console.error(err));
    await p?.stop();
    // Built images live in the shared image cache under this run's workspace namespace.
    if (workspaceId) {
      for (const d of readdirSync(IMAGE_CACHE)) {
        if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`)) {
          rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
        }
      }
      // Their layers (shared by content in .layers/) go too unless another image names them; a
      // minute's grace spares layers another test's import is about to name.
      new ImageStore(IMAGE_CACHE, new ProcessRunner(), systemClock).pruneLayers(60_000);
    }
    if (p) {
      const mounted = execFileSync('cat', ['/proc/self/mounts'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes(p.home));
      expect(mounted).toEqual([]);
      removeHome(p.home);
    }
    rmSync(work, { recursive: true, force: true });
  }, 300_000);

  // The workspace named on every call: the share test adds a second workspace to the admin.
  const api = (path: string, init: RequestInit = {}) =>
    p.api(path, {
      ...init,
      headers: {
        'x-service-workspace': p.credentials.workspace,
        ...(init.headers as Record<string, string>),
      },
    });

  async function get<T>(path: string): Promise<T> {
    const res = await api(path);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as T;
  }

  async function waitFinal(path: string, field: (r: unknown) => string): Promise<unknown> {
    const deadline = Date.now() + BUILD_MS;
    for (;;) {
      const r = await get<unknown>(path);
      const s = field(r);
      if (s === 'BUILT' || s === 'FAILED') return r;
      if (Date.now() > deadline) throw new Error(`${path} still ${s}`);
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  async function open(kind: string, name: string): Promise<string> {
    const res = await api(`/v0/${kind}?upload=true`, {
      method: 'POST',
      body: JSON.stringify({ metadata: { name }, spec: {} }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()) as { status: string }).toMatchObject({ status: 'UPLOADING' });
    const url = res.headers.get('x-service-upload-url');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v0\/builds\/uploads\//);
    expect(res.headers.get('x-blaxel-upload-url')).toBe(url);
    return url!;
  }

  const put = (url: string, body: Buffer, type = 'application/zip') =>
    fetch(url, { method: 'PUT', body, headers: { 'content-type': type } });

  function folderMembers(dir: string): Member[] {
    return readdirSync(dir).map((name) => ({
      name,
      data: execFileSync('cat', [join(dir, name)], { encoding: 'utf8' }),
    }));
  }

  it.each([
    ['node-agent', 'agents', 'node-agent'],
    ['python-agent', 'agents', 'python-agent'],
    ['dockerfile-app', 'functions', 'dockerfile-app'],
  ])(
    'tarmac deploy examples/%s: BUILT, then DEPLOYED (the CLI waits for the replica), with the image on the record and in /v0/images',
    async (folder, kind, name) => {
      const r = await runCli(['deploy', join(EXAMPLES, folder)], { env, timeoutMs: BUILD_MS });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.stdout).toContain(`Built ${kind}/${name}:`); // the streamed build log
      expect(r.stderr).toMatch(/^DEPLOYED: /m); // exit 0 only once a replica answered
      const record = await get<Record_>(`/v0/${kind}/${name}`);
      expect(record.status).toBe('DEPLOYED');
      expect(buildStatus(record)).toBe('BUILT');
      const statuses = record.events.map((e) => e.status);
      for (const s of ['UPLOADING', 'BUILDING', 'BUILT']) expect(statuses).toContain(s);
      const image = record.spec.runtime?.image ?? '';
      expect(image).toMatch(new RegExp(`^${kind}/${name}:b[a-z0-9]+$`));
      const images = await get<ImageView[]>('/v0/images');
      const row = images.find((i) => i.metadata.resourceType === kind && i.metadata.name === name);
      const tag = row?.spec.tags.find((t) => t.name === image.split(':')[1]);
      // A real size: the base image alone is ~340 MB.
      expect(tag?.size).toBeGreaterThan(100_000_000);
      const revisions = await get<Array<{ active: boolean }>>(`/v0/${kind}/${name}/revisions`);
      expect(revisions.length).toBeGreaterThanOrEqual(2);
      // The image is in the engine's store, under the workspace's namespace.
      const stored = readdirSync(IMAGE_CACHE).map((d) => decodeURIComponent(d));
      expect(stored).toContain(`ws-${workspaceId}/${image}`);
    },
    BUILD_MS,
  );

  it(
    'raw API: a zip through ?upload=true builds; the URL is single-use (403 on reuse)',
    async () => {
      const url = await open('agents', 'raw-node');
      const zip = zipOf(folderMembers(join(EXAMPLES, 'node-agent')));
      const first = await put(url, zip);
      expect(first.status, await first.clone().text()).toBe(200);
      const again = await put(url, zip);
      expect(again.status).toBe(403);
      const r = (await waitFinal('/v0/agents/raw-node', (x) => buildStatus(x as Record_))) as Record_;
      expect(buildStatus(r), JSON.stringify(r.events.at(-1))).toBe('BUILT');
      const log = await (await api('/v0/agents/raw-node/logs')).text();
      expect(log).toContain('Detected Node');
    },
    BUILD_MS,
  );

  it(
    'raw API: POST /v0/images?upload=true builds an image only, from a tar.gz',
    async () => {
      const res = await api('/v0/images?upload=true', {
        method: 'POST',
        body: JSON.stringify({ resourceType: 'agents', name: 'pushed-python' }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const url = res.headers.get('x-service-upload-url')!;
      const up = await put(url, tarGzOf(folderMembers(join(EXAMPLES, 'python-agent'))), 'application/gzip');
      expect(up.status, await up.clone().text()).toBe(200);
      const img = (await waitFinal(
        '/v0/images/agents/pushed-python',
        (x) => (x as ImageView).metadata.status,
      )) as ImageView;
      expect(img.metadata.status).toBe('BUILT');
      expect(img.spec.tags[0]?.size).toBeGreaterThan(100_000_000);
      // No deployment was made.
      expect((await api('/v0/agents/pushed-python')).status).toBe(404);
    },
    BUILD_MS,
  );

  it(
    'a broken Dockerfile: FAILED with the failing line, and the CLI exits non-zero',
    async () => {
      const dir = join(work, 'broken');
      cpSync(join(EXAMPLES, 'dockerfile-app'), dir, { recursive: true });
      writeFileSync(
        join(dir, 'Dockerfile'),
        'FROM tarmac/base:latest\nRUN echo step-one\nRUN sh -c "exit 7" # the-failing-line\n',
      );
      writeFileSync(join(dir, 'tarmac.toml'), 'type = "function"\nname = "broken-app"\n');
      const r = await runCli(['deploy', dir], { env, timeoutMs: BUILD_MS });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('the-failing-line');
      const record = await get<Record_>('/v0/functions/broken-app');
      expect(record.status).toBe('FAILED');
      expect(record.events.at(-1)?.message).toContain('the-failing-line');
      expect(record.spec.runtime?.image).toBeUndefined();
    },
    BUILD_MS,
  );

  it(
    'a folder with nothing to build FAILED saying what was looked for',
    async () => {
      const url = await open('jobs', 'nothing-here');
      expect((await put(url, zipOf([{ name: 'README.md', data: 'hi' }]))).status).toBe(200);
      const r = (await waitFinal('/v0/jobs/nothing-here', (x) => (x as Record_).status)) as Record_;
      expect(r.status).toBe('FAILED');
      expect(r.events.at(-1)?.message).toMatch(/looked for a Dockerfile.*package\.json.*requirements\.txt/s);
    },
    BUILD_MS,
  );

  it(
    'secret build args (.env.build) and the operator CA reach RUN steps, never the image or the log',
    async () => {
      const dir = join(work, 'secrets');
      cpSync(join(EXAMPLES, 'dockerfile-app'), dir, { recursive: true });
      const secret = `s3cr3t-${process.pid}-value`;
      writeFileSync(join(dir, '.env.build'), `API_TOKEN=${secret}\n`);
      writeFileSync(
        join(dir, 'Dockerfile'),
        [
          'FROM tarmac/base:latest',
          'COPY . /srv/',
          // The Dockerfile names only the secret's hash (the secret itself must appear nowhere).
          `RUN --mount=type=secret,id=API_TOKEN test "$(sha256sum < /run/secrets/API_TOKEN | cut -c1-64)" = "${sha256(secret)}" && echo secret-ok`,
          'RUN --mount=type=secret,id=API_TOKEN echo "printed: $(cat /run/secrets/API_TOKEN)"',
          `RUN grep -q "${caLine()}" /etc/ssl/certs/ca-certificates.crt && echo operator-ca-trusted`,
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'tarmac.toml'), 'type = "function"\nname = "secret-app"\n');
      // The image serves nothing (no server): stop at BUILT.
      const r = await runCli(['deploy', dir, '--no-wait'], { env, timeoutMs: BUILD_MS });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.stdout).toContain('secret-ok');
      expect(r.stdout).toContain('printed: ***');
      expect(r.stdout).toContain('operator-ca-trusted');
      expect(r.stdout).not.toContain(secret);
      const log = await (await api('/v0/functions/secret-app/logs')).text();
      expect(log).toContain('printed: ***');
      expect(log).not.toContain(secret);
      const record = await get<Record_>('/v0/functions/secret-app');
      // The image's layers (bottom first; shared ones live in the store's .layers/): a file is in
      // the image when a layer holds it (no later layer of this image deletes these paths).
      const imageDir = join(
        IMAGE_CACHE,
        encodeURIComponent(`ws-${workspaceId}/${record.spec.runtime!.image!}`),
      );
      const layers = (
        JSON.parse(readFileSync(join(imageDir, 'image.json'), 'utf8')) as { layers: string[] }
      ).layers.map((l) => join(imageDir, l));
      expect(layers.some((l) => existsSync(join(l, 'srv/Dockerfile')))).toBe(true);
      expect(layers.some((l) => existsSync(join(l, 'srv/.env.build')))).toBe(false);
      for (const rootfs of layers) {
        const hits = execFileSync(
          'sh',
          [
            '-c',
            'grep -rlF "$1" "$2/srv" "$2/run" "$2/etc" "$2/tmp" 2>/dev/null || true',
            'grep',
            secret,
            rootfs,
          ],
          { encoding: 'utf8' },
        );
        expect(hits.trim()).toBe('');
      }
      const top = [...layers].reverse().find((l) => existsSync(join(l, 'etc/ssl/certs/ca-certificates.crt')));
      const bundle = execFileSync('cat', [join(top!, 'etc/ssl/certs/ca-certificates.crt')], {
        encoding: 'utf8',
      });
      expect(bundle).not.toContain(caLine());
    },
    BUILD_MS,
  );

  it('an expired upload URL is 403', async () => {
    const url = await open('agents', 'too-late');
    await new Promise((r) => setTimeout(r, 11_000)); // TTL is 10 s here
    const res = await put(url, zipOf([{ name: 'main.py', data: '' }]));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('expired');
  }, 60_000);

  it('a forged upload URL is 403', async () => {
    const url = await open('agents', 'forged');
    const res = await put(`${url.slice(0, -3)}AAA`, zipOf([{ name: 'main.py', data: '' }]));
    expect(res.status).toBe(403);
  });

  it('an upload over the limit is 413', async () => {
    const url = await open('agents', 'too-big');
    const big = zipOf([{ name: 'blob.bin', data: 'x'.repeat(2 * 1024 * 1024) }]);
    const res = await put(url, big);
    expect(res.status).toBe(413);
  });

  it('zip-slip: `..`, absolute and escaping-symlink archives are 400 and write nothing outside', async () => {
    const marker = `i15-slip-${process.pid}`;
    const attacks: Member[][] = [
      [{ name: `../../../../${marker}.txt`, data: 'pwned' }],
      [{ name: `/tmp/${marker}.txt`, data: 'pwned' }],
      [
        { name: 'esc', link: '../../..' },
        { name: `esc/${marker}.txt`, data: 'pwned' },
      ],
    ];
    for (const [i, members] of attacks.entries()) {
      const url = await open('agents', `slip-${i}`);
      const res = await put(url, zipOf(members));
      expect(res.status, await res.clone().text()).toBe(400);
      const r = await get<Record_>(`/v0/agents/slip-${i}`);
      expect(r.status).toBe('FAILED');
      expect(r.events.at(-1)?.message).toMatch(/Upload refused/);
    }
    const tarUrl = await open('agents', 'slip-tar');
    const tarRes = await put(
      tarUrl,
      tarGzOf([{ name: `../../${marker}.txt`, data: 'pwned' }]),
      'application/gzip',
    );
    expect(tarRes.status).toBe(400);
    const found = execFileSync(
      'sh',
      ['-c', `find "$1" "$2" -maxdepth 6 -name "${marker}*" 2>/dev/null || true`, 'find', p.home, tmpdir()],
      { encoding: 'utf8' },
    ).trim();
    expect(found).toBe('');
    expect(existsSync(`/tmp/${marker}.txt`)).toBe(false);
  }, 60_000);

  it(
    'the GC removes a deleted built image and then its own layers; the shared base layer stays',
    async () => {
      const res = await api('/v0/images?upload=true', {
        method: 'POST',
        body: JSON.stringify({ resourceType: 'agents', name: 'gc-me' }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const unique = `gc-${process.pid}-${Date.now()}`;
      const archive = tarGzOf([
        { name: 'Dockerfile', data: 'FROM tarmac/base:latest\nCOPY gc.txt /gc.txt\n' },
        { name: 'gc.txt', data: unique },
      ]);
      const up = await put(res.headers.get('x-service-upload-url')!, archive, 'application/gzip');
      expect(up.status, await up.clone().text()).toBe(200);
      const img = (await waitFinal(
        '/v0/images/agents/gc-me',
        (x) => (x as ImageView).metadata.status,
      )) as ImageView;
      expect(img.metadata.status).toBe('BUILT');
      const imageDir = join(
        IMAGE_CACHE,
        encodeURIComponent(`ws-${workspaceId}/agents/gc-me:${img.spec.tags[0]!.name}`),
      );
      const layers = (
        JSON.parse(readFileSync(join(imageDir, 'image.json'), 'utf8')) as { layers: string[] }
      ).layers.map((l) => join(imageDir, l));
      // Bottom: the base, shared with every other build here; top: this image's own COPY.
      expect(layers.length).toBeGreaterThanOrEqual(2);
      const [base, top] = [layers[0]!, layers.at(-1)!];
      expect(readFileSync(join(top, 'gc.txt'), 'utf8')).toBe(unique);
      expect((await api('/v0/images/agents/gc-me', { method: 'DELETE' })).status).toBe(200);
      // A GC pass every 2 s; the layer grace is 5 s here.
      const deadline = Date.now() + 60_000;
      while ((existsSync(imageDir) || existsSync(top)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(imageDir)).toBe(false);
      expect(existsSync(top)).toBe(false);
      expect(existsSync(join(base, 'etc/os-release'))).toBe(true); // other images name it
    },
    BUILD_MS,
  );

  it('deleting an image a workload uses is 409', async () => {
    const res = await api('/v0/images/agents/node-agent', { method: 'DELETE' });
    expect(res.status).toBe(409);
  });
  it('a share makes a built image runnable in the target workspace, and not before', async () => {
    const ws2 = `i15-share-${process.pid}`;
    const created = await api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: ws2 }) });
    expect(created.status, await created.clone().text()).toBe(200);
    const inWs2 = (path: string, init: RequestInit = {}) =>
      p.api(path, { ...init, headers: { 'x-service-workspace': ws2 } });
    const image = (await get<Record_>('/v0/agents/node-agent')).spec.runtime!.image!;
    const sandbox = JSON.stringify({
      metadata: { name: 'from-share' },
      spec: { runtime: { image, memory: 512 } },
    });
    const before = await inWs2('/v0/sandboxes', { method: 'POST', body: sandbox });
    expect(before.status, await before.clone().text()).toBe(400);
    const share = await api('/v0/images/agents/node-agent/share', {
      method: 'POST',
      body: JSON.stringify({ targetWorkspace: ws2 }),
    });
    expect(share.status, await share.clone().text()).toBe(200);
    const after = await inWs2('/v0/sandboxes', { method: 'POST', body: sandbox });
    expect(after.status, await after.clone().text()).toBe(200);
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const s = (await (await inWs2('/v0/sandboxes/from-share')).json()) as {
          status: string;
          events?: Array<{ message: string }>;
        };
        if (s.status === 'DEPLOYED') break;
        if (s.status === 'FAILED' || Date.now() > deadline) {
          throw new Error(`sandbox ${s.status}: ${JSON.stringify(s.events?.slice(-3))}`);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await inWs2('/v0/sandboxes/from-share', { method: 'DELETE' });
      const deadline = Date.now() + 60_000;
      for (;;) {
        const res = await inWs2('/v0/sandboxes/from-share');
        const s = res.status === 404 ? 'GONE' : ((await res.json()) as { status: string }).status;
        if (s === 'TERMINATED' || s === 'GONE' || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }, 300_000);
});
