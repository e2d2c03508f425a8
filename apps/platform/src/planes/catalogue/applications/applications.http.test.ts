// Issue 16 "Applications", the catalogue's side, in process over a real store: the spec's body shape
// (the image in `revisions[]`, as the reference CLI sends it; control-plane.md §3.3) is accepted and
// makes the active revision, with the entry's port and memory unless the flat fields say otherwise;
// an update without an image keeps the current one; `metadata.url` is the application's own host;
// `urls[]` hosts are one application's: a second claim — another workspace's or the same one's — is
// 409 naming the field, the platform's own hosts and other kinds' host shapes are 400 naming it, a
// custom domain registered by another workspace cannot be claimed; disabling is DEACTIVATING (the
// run plane finishes it).
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are inspected loosely */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openTestPlatform,
  testDatabases,
  type TestIdentity,
  type TestPlatform,
} from '../../../test-support/harness.js';

const [sqlite] = testDatabases({});
type Json = Record<string, any>;

describe('applications: spec-shaped bodies and urls[] claims (issue 16)', () => {
  let t: TestPlatform & { dispose(): Promise<void> };
  let other: TestIdentity;

  beforeAll(async () => {
    t = await openTestPlatform(sqlite!);
    other = await t.addAccount({ workspace: 'rival' });
  });
  afterAll(async () => t.dispose());

  const put = (name: string, spec: Json, key?: string) =>
    t.json<Json>(`/v0/applications/${name}`, {
      method: 'PUT',
      body: { metadata: { name }, spec },
      ...(key ? { key } : {}),
    });

  it('takes the image, port and memory of the newest revisions[] entry; flat fields win', async () => {
    const res = await put('web', {
      revisions: [
        { image: 'apps/web:old', createdAt: '2026-01-01T00:00:00Z' },
        { image: 'apps/web:new', port: 3000, memory: 512, envs: [{ name: 'K', value: 'v' }] },
      ],
      urls: [{ domain: 'web.example.com' }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.spec).toMatchObject({ image: 'apps/web:new', port: 3000, memory: 512 });
    expect(res.body.spec.revisions).toHaveLength(1);
    expect(res.body.spec.revisions[0]).toMatchObject({ image: 'apps/web:new', port: 3000, memory: 512 });
    expect(res.body.spec.revisions[0].envs).toEqual([{ name: 'K', value: 'v' }]);
    expect(res.body.spec.revision.active).toBe(res.body.spec.revisions[0].id);
    expect(res.body.status).toBe('DEPLOYING');
    // Its own host: app-<name>-<ws>.<region>.<domain> (reference §5.2 per-workload hostnames).
    expect(res.body.metadata.url).toBe(`http://app-web-${t.workspace}.local.localhost`);

    const flat = await put('web', { revisions: [{ image: 'apps/web:2', port: 3000 }], port: 4000 });
    expect(flat.body.spec.revisions[0]).toMatchObject({ image: 'apps/web:2', port: 4000 });
    // A body read back (every entry known, newest first) keeps the current image.
    const back = await put('web', { ...flat.body.spec });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.spec.revisions.map((r: Json) => r.image)).toEqual([
      'apps/web:2',
      'apps/web:2',
      'apps/web:new',
    ]);
    // No image at all on an update: the current one stays.
    const keep = await put('web', { port: 4000, urls: [{ domain: 'web.example.com' }] });
    expect(keep.body.spec.revisions[0].image).toBe('apps/web:2');
  });

  it('names the field of a bad revisions[] entry', async () => {
    const res = await put('bad', { revisions: [{ image: '' }] });
    expect(res.status).toBe(400);
    expect(res.body.details?.[0]?.field).toBe('body.spec.revisions.0.image');
    const port = await put('bad', { revisions: [{ image: 'x/y:1', port: 70_000 }] });
    expect(port.body.details?.[0]?.field).toBe('body.spec.revisions.0.port');
  });

  it('a host is one application’s: another workspace, or another application, gets 409 naming the field', async () => {
    const rival = await put(
      'site',
      { image: 'x/y:1', urls: [{ subdomain: 'www', domain: 'Web.Example.com' }] },
      other.apiKey,
    );
    expect(rival.status).toBe(200); // www.web.example.com: another host
    const taken = await put('site2', { image: 'x/y:1', urls: [{ domain: 'web.example.com' }] }, other.apiKey);
    expect(taken.status).toBe(409);
    expect(taken.body.details).toEqual([
      {
        field: 'body.spec.urls.0.domain',
        message: 'web.example.com is already claimed by another workspace',
      },
    ]);
    const mine = await put('web2', {
      image: 'x/y:1',
      urls: [{ domain: 'shop.test' }, { domain: 'WEB.example.com' }],
    });
    expect(mine.status).toBe(409);
    expect(mine.body.details?.[0]).toEqual({
      field: 'body.spec.urls.1.domain',
      message: 'web.example.com is already claimed by application web',
    });
    // The same application may keep its own claim on update; a freed host can be claimed.
    expect((await put('web', { urls: [{ domain: 'web.example.com' }] })).status).toBe(200);
    expect((await t.json(`/v0/applications/web`, { method: 'DELETE' })).status).toBe(200);
    expect(
      (await put('site2', { image: 'x/y:1', urls: [{ domain: 'web.example.com' }] }, other.apiKey)).status,
    ).toBe(200);
  });

  it('refuses the platform’s own hosts and other kinds’ host shapes (400 naming the field)', async () => {
    for (const [url, field] of [
      [{ subdomain: 'sbx-a-b' }, 'body.spec.urls.0.subdomain'],
      [{ subdomain: 'app-x-default' }, 'body.spec.urls.0.subdomain'],
      [{ domain: 'preview.example.org' }, 'body.spec.urls.0.domain'],
      [{ domain: 'tarmac.test' }, 'body.spec.urls.0.domain'], // the API's own host in these tests
      [{}, 'body.spec.urls.0'],
      [{ domain: 'not a host' }, 'body.spec.urls.0.domain'],
      [{ domain: '127.0.0.1' }, 'body.spec.urls.0.domain'], // API traffic by IP must stay the API's
      [{ subdomain: '10', domain: '0.0.5' }, 'body.spec.urls.0.domain'],
    ] as const) {
      const res = await put('odd', { image: 'x/y:1', urls: [url] });
      expect(res.status, JSON.stringify(url)).toBe(400);
      expect(res.body.details?.[0]?.field, JSON.stringify(url)).toBe(field);
    }
  });

  it('a custom domain another workspace registered cannot be claimed; the registrant can', async () => {
    const reg = await t.json('/v0/customdomains', {
      method: 'POST',
      key: other.apiKey,
      body: { metadata: { name: 'rival.example' }, spec: { domainType: 'applications' } },
    });
    expect(reg.status).toBe(200);
    const res = await put('steal', {
      image: 'x/y:1',
      urls: [{ subdomain: 'shop', domain: 'rival.example' }],
    });
    expect(res.status).toBe(409);
    expect(res.body.details?.[0]?.field).toBe('body.spec.urls.0.domain');
    const own = await put(
      'shop',
      { image: 'x/y:1', urls: [{ subdomain: 'shop', domain: 'rival.example' }] },
      other.apiKey,
    );
    expect(own.status).toBe(200);
  });

  it('disabling is DEACTIVATING (the run plane writes DEACTIVATED once no replica runs)', async () => {
    const res = await put('off', { image: 'x/y:1', enabled: false });
    expect(res.body.status).toBe('DEACTIVATING');
  });
});
