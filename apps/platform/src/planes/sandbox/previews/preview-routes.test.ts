// The route table against a real store (SQLite and PostgreSQL): lookups by preview id and custom
// host, a ChangeFeed notice makes the next lookup see a delete or change at once, and the max-age
// backstop catches a write that bypassed the feed.
import type { Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { PREVIEW_KIND } from './previews.service.js';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { PreviewRoutes, previewEndsAt } from './preview-routes.js';
import { putCustomDomain, putPreview } from './test-support.js';

describe('previewEndsAt', () => {
  it('is the earlier of expires and ttl after the last write, or undefined', () => {
    const at = '2026-01-01T00:00:00.000Z';
    expect(previewEndsAt({ port: 80 }, at)).toBeUndefined();
    expect(previewEndsAt({ port: 80, ttl: '1h' }, at)).toBe(Date.parse(at) + 3600_000);
    expect(previewEndsAt({ port: 80, ttl: '1h', expires: '2026-01-01T00:10:00Z' }, at)).toBe(
      Date.parse('2026-01-01T00:10:00Z'),
    );
    expect(previewEndsAt({ port: 80, ttl: '5m', expires: '2026-01-02T00:00:00Z' }, at)).toBe(
      Date.parse(at) + 300_000,
    );
  });
});

for (const db of testDatabases(process.env)) {
  describe(`PreviewRoutes (${db.name})`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let clock = 0;
    let ws = '';
    let accountId = '';
    const feed = new ChangeFeed();
    beforeEach(async () => {
      ({ store, dispose } = await db.open());
      ({ workspace: ws, accountId } = await bootstrap(store, { mintKey: false, now: () => new Date() }));
    });
    afterEach(() => dispose());

    it('finds previews by id and custom host; a notice makes a delete visible at once', async () => {
      const routes = new PreviewRoutes(store, feed, () => clock, 30_000);
      const id = await putPreview(store, ws, 'box', 'web', { port: 3000, public: true }, 'abc123');
      await putPreview(store, ws, 'box', 'dom', {
        port: 4000,
        customDomain: 'example.com',
        prefixUrl: 'app',
        requestHeaders: { 'X-A': '1' },
      });
      expect(await routes.lookup({ kind: 'id', previewId: 'abc123' })).toMatchObject({
        workspace: ws,
        sandbox: 'box',
        name: 'web',
        port: 3000,
        public: true,
      });
      expect(await routes.lookup({ kind: 'custom', hostname: 'app.preview.example.com' })).toMatchObject({
        name: 'dom',
        public: false,
        requestHeaders: { 'X-A': '1' },
      });
      await store.resources.delete(id);
      // Without a notice the table still has it (until max age) …
      expect(await routes.lookup({ kind: 'id', previewId: 'abc123' })).toBeDefined();
      // … a notice (what every ResourceCollection write publishes) drops it on the next lookup.
      feed.publish({ workspace: ws, kind: PREVIEW_KIND, name: 'box/web' });
      expect(await routes.lookup({ kind: 'id', previewId: 'abc123' })).toBeUndefined();
      routes.close();
    });

    it('reloads after max age even without a notice (writes from another process)', async () => {
      const routes = new PreviewRoutes(store, new ChangeFeed(), () => clock, 1000);
      expect(await routes.lookup({ kind: 'id', previewId: 'late' })).toBeUndefined();
      await putPreview(store, ws, 'box', 'late', { port: 1 });
      expect(await routes.lookup({ kind: 'id', previewId: 'late' })).toBeUndefined();
      clock += 1001;
      expect(await routes.lookup({ kind: 'id', previewId: 'late' })).toBeDefined();
      routes.close();
    });

    it('a custom host stays with its first claimant; a registered domain belongs to its workspace', async () => {
      const now = new Date().toISOString();
      const other = 'intruder';
      await store.workspaces.create({
        id: 'w-intruder',
        name: other,
        accountId,
        displayName: null,
        labels: {},
        createdAt: now,
        updatedAt: now,
        createdBy: 't',
        updatedBy: 't',
      });
      const routes = new PreviewRoutes(store, feed, () => clock, 30_000);
      const spec = { port: 1, public: true, customDomain: 'shop.example', prefixUrl: 'www' };
      await putPreview(store, ws, 'box', 'first', spec);
      await new Promise((r) => setTimeout(r, 5)); // "oldest" is by creation time
      await putPreview(store, other, 'box', 'second', spec);
      const host = { kind: 'custom', hostname: 'www.preview.shop.example' } as const;
      expect((await routes.lookup(host))?.workspace).toBe(ws);
      // The intruder registers the domain itself: now only its previews may use it.
      await putCustomDomain(store, other, 'shop.example');
      feed.publish({ workspace: other, kind: 'custom-domain', name: 'shop.example' });
      expect((await routes.lookup(host))?.workspace).toBe(other);
      routes.close();
    });
  });
}
