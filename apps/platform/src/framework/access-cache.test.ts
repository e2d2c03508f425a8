// Issue 19 item 10: the sandbox plane's access cache forgets everything on a revocation notice,
// never keeps an entry past the credential's expiry, and otherwise keeps it at most 1 s.
import type { Authenticator, Principal, WorkspaceResolver } from '@tarmac/server-kit';
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from './change-feed.js';
import { revocationPublisher } from './revocations.js';
import { AccessCache } from './access-cache.js';

function setup(expiresAtMs?: number, refresh?: { windowMs: number; maxRefreshed: number }) {
  let clock = 1_000_000;
  const valid = new Set(['key-a']);
  let lookups = 0;
  const authenticator: Authenticator = {
    async authenticate(token) {
      lookups++;
      if (!valid.has(token) || (expiresAtMs !== undefined && clock >= expiresAtMs)) return undefined;
      const p: Principal = { id: 'u1', kind: 'user', accountId: 'a1', via: 'api_key' };
      return expiresAtMs !== undefined ? { ...p, expiresAtMs } : p;
    },
  };
  const workspaces: WorkspaceResolver = {
    async resolve(_p, name) {
      if (name !== 'ws') throw new Error('not a member');
      return { name: 'ws', accountId: 'a1', role: 'admin' };
    },
  };
  const feed = new ChangeFeed();
  const cache = new AccessCache(authenticator, workspaces, () => clock, 1000, 100, feed, refresh);
  return {
    cache,
    feed,
    valid,
    lookups: () => lookups,
    advance: (ms: number) => (clock += ms),
  };
}

describe('AccessCache', () => {
  it('peekAllowed answers from fresh, allowed entries only, within the same bounds', async () => {
    const t = setup();
    expect(t.cache.peekAllowed('key-a', 'ws')).toBeUndefined(); // nothing cached: ask
    expect(await t.cache.authenticated('key-a')).toBeDefined();
    expect(t.cache.peekAllowed('key-a', 'ws')).toBeUndefined(); // membership not cached yet
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    expect(t.cache.peekAllowed('key-a', 'ws')?.id).toBe('u1');
    expect(await t.cache.allowed('key-a', 'other')).toBe(false);
    expect(t.cache.peekAllowed('key-a', 'other')).toBeUndefined(); // a "no" is not answered here
    t.advance(1000);
    expect(t.cache.peekAllowed('key-a', 'ws')).toBeUndefined(); // expired
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    revocationPublisher(t.feed)({ principalId: 'u1' });
    expect(t.cache.peekAllowed('key-a', 'ws')).toBeUndefined(); // revoked: forgotten at once
  });

  it('caches a decision for at most the TTL (1 s)', async () => {
    const t = setup();
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    t.valid.delete('key-a'); // revoked in another process: no notice here
    t.advance(999);
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    t.advance(1);
    expect(await t.cache.allowed('key-a', 'ws')).toBe(false);
  });

  it('a revocation notice takes effect on the next lookup and tells listeners', async () => {
    const t = setup();
    const heard: string[] = [];
    t.cache.onRevoke((r) => heard.push(r.principalId));
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    expect(await t.cache.authenticated('key-a')).toBeDefined();
    t.valid.delete('key-a');
    revocationPublisher(t.feed)({ principalId: 'u1' });
    expect(await t.cache.allowed('key-a', 'ws')).toBe(false);
    expect(await t.cache.authenticated('key-a')).toBeUndefined();
    expect(heard).toEqual(['u1']);
  });

  it('never keeps an entry past the credential expiry', async () => {
    const t = setup(1_000_000 + 300);
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    t.advance(299);
    expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
    t.advance(1);
    expect(await t.cache.allowed('key-a', 'ws')).toBe(false);
    expect(await t.cache.authenticated('key-a')).toBeUndefined();
  });

  it('a lookup that started before a revocation is not cached after it', async () => {
    const t = setup();
    const pending = t.cache.authenticated('key-a'); // reads "valid" now...
    revocationPublisher(t.feed)({ principalId: 'u1' }); // ...revoked before it resolves
    t.valid.delete('key-a');
    await pending;
    const before = t.lookups();
    expect(await t.cache.authenticated('key-a')).toBeUndefined();
    expect(t.lookups()).toBe(before + 1);
  });

  describe('refresh ahead (issue 20 item 2)', () => {
    const refresh = { windowMs: 30_000, maxRefreshed: 10 };

    it('a request after a pause finds a fresh entry: the store was asked in the background', async () => {
      const t = setup(undefined, refresh);
      expect(await t.cache.authenticated('key-a')).toBeDefined();
      expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
      for (let i = 0; i < 14; i++) {
        t.advance(500); // a 7 s pause, the background pass running every half TTL
        await t.cache.refreshDue();
      }
      const before = t.lookups();
      expect(await t.cache.authenticated('key-a')).toBeDefined();
      expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
      expect(t.lookups()).toBe(before); // nothing on the request path
    });

    it('keeps the TTL bound: a key revoked elsewhere is refused within one TTL, pause or not', async () => {
      const t = setup(undefined, refresh);
      expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
      t.valid.delete('key-a'); // revoked in another process: no notice here
      t.advance(600);
      await t.cache.refreshDue(); // re-validated in the background: now refused
      expect(await t.cache.allowed('key-a', 'ws')).toBe(false);
    });

    it('stops refreshing an entry unused for longer than the window', async () => {
      const t = setup(undefined, refresh);
      expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
      for (let i = 0; i < 70; i++) {
        t.advance(500);
        await t.cache.refreshDue();
      }
      const before = t.lookups();
      t.advance(500);
      await t.cache.refreshDue();
      expect(t.lookups()).toBe(before);
    });

    it("never refreshes past the credential's expiry", async () => {
      const t = setup(1_000_000 + 1500, refresh);
      expect(await t.cache.allowed('key-a', 'ws')).toBe(true);
      t.advance(800);
      await t.cache.refreshDue();
      t.advance(700);
      expect(await t.cache.allowed('key-a', 'ws')).toBe(false);
    });
  });
});
