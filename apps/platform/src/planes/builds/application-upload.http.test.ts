// Applications deploy from code like agents, functions and jobs (issue 15 "The flow"; reference
// control-plane.md §1.1 "Code-upload create/update": "the same works for ... applications"), in
// process over a real store: `?upload=true` on POST and PUT answers the upload URL headers and
// leaves the application UPLOADING without an image; without it `spec.image` stays required (400
// naming it); a good build sets `spec.image` and adds the AppRevision (reference §1.5) that becomes
// the active one, and the tag is listed under /v0/images/applications/{name}. The build itself
// (buildah) is proven for the other kinds in tests/e2e/builds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';
import { sharedServices } from '../../shared-services.js';
import { DEFAULT_HOSTS } from '../../framework/hosts.js';
import { CatalogueBuildRecords } from '../catalogue/build-records.js';
import { Buildah } from './buildah.js';
import { registerBuildRoutes } from './builds.routes.js';
import { BuildsService } from './builds.service.js';
import { LayerExport } from './layer-export.js';
import { UploadTickets } from './upload-tickets.js';

const [sqlite] = testDatabases({});

interface AppView {
  status: string;
  spec: { image?: string; revision?: { active?: string }; revisions: Array<{ id: string; image: string }> };
}

describe('applications: ?upload=true (issue 15)', () => {
  const work = mkdtempSync(join(tmpdir(), 'app-upload-'));
  let t: TestPlatform & { dispose(): Promise<void> };
  let records!: CatalogueBuildRecords;
  let workspace = '';

  beforeAll(async () => {
    t = await openTestPlatform(sqlite!, {
      deps: (deps) => {
        const shared = sharedServices(deps);
        records = new CatalogueBuildRecords({
          store: deps.store,
          feed: shared.changeFeed,
          now: () => new Date(),
          secrets: shared.secrets,
          hosts: DEFAULT_HOSTS,
          apiUrl: deps.apiUrl,
        });
        const builds = new BuildsService({
          records,
          images: {
            importTarget: () => Promise.reject(new Error('no builds run in this test')),
            importImage: () => Promise.reject(new Error('no builds run in this test')),
            baseImage: () => Promise.reject(new Error('no builds run in this test')),
          },
          // Never started here: open() only issues the URL.
          builder: new Buildah({
            root: join(work, 'storage'),
            runroot: join(work, 'run'),
            isolation: 'oci',
            network: 'none',
            memoryMB: 512,
            timeoutMs: 60_000,
            trustedCaPem: '',
          }),
          tickets: new UploadTickets(new Uint8Array(32).fill(3), 60_000),
          workDir: join(work, 'work'),
          layerExport: new LayerExport(join(work, 'layer-blobs')),
          limits: { maxUploadBytes: 1 << 20, maxBytes: 1 << 20, maxEntries: 100 },
          apiUrl: deps.apiUrl,
          log: () => undefined,
        });
        return {
          ...deps,
          earlyRoutes: (app) =>
            registerBuildRoutes(app, {
              builds,
              authenticator: shared.authenticator,
              workspaces: shared.workspaces,
            }),
        };
      },
    });
    const me = (await (await t.request('/v0/workspaces')).json()) as Array<{ name: string }>;
    workspace = me[0]!.name;
  });

  afterAll(async () => {
    await t.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  const app = async (name: string) => (await (await t.request(`/v0/applications/${name}`)).json()) as AppView;

  it('POST ?upload=true: the upload URL headers, UPLOADING, no image and no revision yet', async () => {
    const res = await t.request('/v0/applications?upload=true', {
      method: 'POST',
      body: { metadata: { name: 'web' }, spec: { port: 3000 } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const url = res.headers.get('x-service-upload-url');
    expect(url).toMatch(/\/v0\/builds\/uploads\/[\w-]+\.[\w-]+$/);
    expect(res.headers.get('x-blaxel-upload-url')).toBe(url);
    expect(((await res.json()) as { status: string }).status).toBe('UPLOADING');
    const view = await app('web');
    expect(view.status).toBe('UPLOADING');
    expect(view.spec.image).toBeUndefined();
    expect(view.spec.revisions).toEqual([]);
  });

  it('without ?upload=true an application still needs spec.image (400 naming it)', async () => {
    for (const [method, path] of [
      ['POST', '/v0/applications'],
      ['PUT', '/v0/applications/web'],
      ['POST', '/v0/applications?upload=false'],
    ] as const) {
      const res = await t.request(path, { method, body: { metadata: { name: 'web' }, spec: {} } });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(await res.text()).toContain('spec.image');
    }
    const bad = await t.request('/v0/applications?upload=maybe', {
      method: 'POST',
      body: { metadata: { name: 'other' }, spec: { image: 'x/y:1' } },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('query.upload');
  });

  it('a good build sets spec.image and adds the active revision; the tag is listed under images', async () => {
    const target = { kind: 'application', name: 'web', imageType: 'applications' } as const;
    await records.built(workspace, 'tester', target, {
      ref: 'applications/web:b1',
      tag: 'b1',
      sizeBytes: 1234,
    });
    const view = await app('web');
    expect(view.status).toBe('BUILT');
    expect(view.spec.image).toBe('applications/web:b1');
    expect(view.spec.revisions.map((r) => r.image)).toEqual(['applications/web:b1']);
    expect(view.spec.revision?.active).toBe(view.spec.revisions[0]!.id);
    const revisions = (await (await t.request('/v0/applications/web/revisions')).json()) as unknown[];
    expect(revisions).toHaveLength(1);
    const image = (await (await t.request('/v0/images/applications/web')).json()) as {
      spec: { tags: Array<{ name: string; size: number }> };
    };
    expect(image.spec.tags).toEqual([expect.objectContaining({ name: 'b1', size: 1234 })]);
    // In use by the application: deleting the image is refused.
    expect((await t.request('/v0/images/applications/web', { method: 'DELETE' })).status).toBe(409);
  });

  it('PUT ?upload=true on an existing application keeps its image (a failed build leaves it serving)', async () => {
    const res = await t.request('/v0/applications/web?upload=true', {
      method: 'PUT',
      body: { metadata: { name: 'web' }, spec: { port: 3000 } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-upload-url')).toBeTruthy();
    const view = await app('web');
    expect(view.status).toBe('UPLOADING');
    expect(view.spec.image).toBe('applications/web:b1');
    expect(view.spec.revisions).toHaveLength(1);
    await records.setStatus(
      workspace,
      { kind: 'application', name: 'web', imageType: 'applications' },
      'FAILED',
      'boom',
    );
    const failed = await app('web');
    expect(failed.status).toBe('FAILED');
    expect(failed.spec.image).toBe('applications/web:b1');
  });
});
