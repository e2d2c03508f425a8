// Issue 19 item 2 on a real store: what `spec.runtime.image` names in a workspace (built-in, an
// image record of the workspace — its own or shared into it —, its own import, nothing else), and
// the start-up move of images stored before namespaces into their workspaces.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEngine } from '@tarmac/engine';
import type { NewResource, Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { namespaceLegacyImages } from './legacy-images.js';
import { WorkspaceImages, namespacedRef, workspaceRef } from './workspace-images.js';

const [sqlite] = testDatabases({});
const now = () => new Date('2026-01-01T00:00:00Z');

describe('workspace images', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let ids: Record<string, string>;
  let seq = 0;

  const row = (workspace: string, kind: string, name: string, spec: unknown, system = {}): NewResource => ({
    id: `r-${++seq}`,
    workspace,
    kind,
    parent: '',
    name,
    displayName: null,
    externalId: null,
    labels: {},
    spec,
    status: 'BUILT',
    state: null,
    system,
    events: [],
    createdAt: now().toISOString(),
    updatedAt: now().toISOString(),
    createdBy: 'u',
    updatedBy: 'u',
    terminatedAt: null,
  });
  const tag = (source: string) => ({ tags: [{ name: '1', size: 0, createdAt: '', updatedAt: '', source }] });

  beforeEach(async () => {
    ({ store, dispose } = await sqlite!.open());
    const { accountId, adminId } = await bootstrap(store, { mintKey: false, now });
    const at = now().toISOString();
    for (const name of ['team-a', 'team-b']) {
      await store.workspaces.create({
        name,
        id: crypto.randomUUID(),
        accountId,
        displayName: null,
        labels: {},
        createdAt: at,
        updatedAt: at,
        createdBy: adminId,
        updatedBy: adminId,
      });
    }
    ids = {};
    for (const name of ['default', 'team-a', 'team-b']) ids[name] = (await store.workspaces.get(name))!.id;
  });
  afterEach(() => dispose());

  it('one ref is two images in two workspaces; the built-in base image is everyone’s', async () => {
    const images = new WorkspaceImages(store);
    const a = await images.resolve('team-a', 'acme/tool:1');
    const b = await images.resolve('team-b', 'docker.io/acme/tool:1');
    expect(a).toBe(`ws-${ids['team-a']}/acme/tool:1`);
    expect(b).toBe(`ws-${ids['team-b']}/acme/tool:1`);
    expect(await images.importTarget('team-b', 'acme/tool')).toBe(b?.replace(':1', ':latest'));
    expect(workspaceRef(a!)).toBe('acme/tool:1');
    for (const ws of ['team-a', 'team-b']) {
      expect(await images.resolve(ws, 'blaxel/base-image')).toBe('tarmac/base:latest');
    }
    await expect(images.importTarget('team-a', 'tarmac/base:latest')).rejects.toThrow(/built-in base image/);
    await expect(images.importTarget('team-a', 'blaxel/base-image')).rejects.toThrow(/built-in base image/);
    // A ref that spells another namespace stays inside the caller's own.
    expect(await images.resolve('team-b', `ws-${ids['team-a']}/acme/tool:1`)).toBe(
      `ws-${ids['team-b']}/ws-${ids['team-a']}/acme/tool:1`,
    );
    expect(await images.resolve('team-a', 'NOT a ref')).toBeUndefined();
  });

  it('an image record resolves in the workspace that owns the image: its own, or the one that shared it', async () => {
    const images = new WorkspaceImages(store);
    await store.resources.create(row('team-a', 'image', 'sandboxes/tool', tag('acme/tool:1')));
    expect(await images.resolve('team-a', 'sandboxes/tool:1')).toBe(`ws-${ids['team-a']}/acme/tool:1`);
    expect(await images.resolve('team-a', 'sandbox/tool:1')).toBe(`ws-${ids['team-a']}/acme/tool:1`);
    // Not shared: in team-b the name is only team-b's own import of that ref.
    expect(await images.resolve('team-b', 'sandboxes/tool:1')).toBe(`ws-${ids['team-b']}/sandboxes/tool:1`);
    // The share copy (what POST .../share or an accepted pending share writes) names its source.
    const copy = row('team-b', 'image', 'sandboxes/tool', tag('acme/tool:1'), { sourceWorkspace: 'team-a' });
    await store.resources.create(copy);
    expect(await images.resolve('team-b', 'sandboxes/tool:1')).toBe(`ws-${ids['team-a']}/acme/tool:1`);
    // A record registered by team-b itself, naming the same source ref, stays in team-b's namespace.
    await store.resources.create(row('team-b', 'image', 'sandboxes/own', tag('acme/tool:1')));
    expect(await images.resolve('team-b', 'sandboxes/own:1')).toBe(`ws-${ids['team-b']}/acme/tool:1`);
  });

  it('images of the flat layout move to the workspaces whose sandboxes use them, else to default', async () => {
    // The real engine image store on a temp dir, holding images the way older platforms stored them.
    const home = mkdtempSync(join(tmpdir(), 'tarmac-legacy-'));
    try {
      const engine = new LocalEngine({
        home,
        runtime: { nodeBinary: process.execPath, tiniBinary: '/nonexistent', sandboxdBundle: '/nonexistent' },
      });
      for (const ref of ['tarmac/base:latest', 'acme/tool:1', 'acme/unused:2']) {
        const dir = join(home, 'images', encodeURIComponent(ref));
        mkdirSync(join(dir, 'layers/000'), { recursive: true });
        writeFileSync(join(dir, 'layers/000/who'), ref);
        const manifest = {
          ref,
          layers: ['layers/000'],
          env: [],
          workingDir: '/',
          createdAt: 'x',
          sizeBytes: 1,
        };
        writeFileSync(join(dir, 'image.json'), JSON.stringify(manifest));
      }
      await store.resources.create(row('team-a', 'sandbox', 's1', { runtime: { image: 'acme/tool:1' } }));
      await store.resources.create(
        row('team-b', 'sandbox', 's2', { runtime: { image: 'docker.io/acme/tool:1' } }),
      );
      await store.resources.create(row('team-b', 'sandbox', 's3', { runtime: { image: 'other:1' } }));
      await namespaceLegacyImages(engine.images, store, pino({ level: 'silent' }));
      const tool = (ws: string) => namespacedRef(ids[ws]!, 'acme/tool:1');
      expect(engine.images.refs().sort()).toEqual(
        [
          tool('team-a'),
          tool('team-b'),
          namespacedRef(ids.default!, 'acme/unused:2'),
          'tarmac/base:latest',
        ].sort(),
      );
      // Each workspace reaches its copy by the ref it always used; the manifest names the new ref.
      const images = new WorkspaceImages(store);
      for (const ws of ['team-a', 'team-b']) {
        const resolved = engine.images.resolve((await images.resolve(ws, 'acme/tool:1'))!);
        expect(resolved.ref).toBe(tool(ws));
        expect(readFileSync(join(resolved.layerDirs[0]!, 'who'), 'utf8')).toBe('acme/tool:1');
      }
      // A second start finds nothing left to move.
      await namespaceLegacyImages(engine.images, store, pino({ level: 'silent' }));
      expect(engine.images.refs()).toHaveLength(4);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
