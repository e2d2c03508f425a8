// `GET /v0/users` lists the members and the invitations not yet accepted (reference
// control-plane.md §1.13: WorkspaceUser has `accepted` and `expired`), sorted as one list. The
// reference does not name it among the paginated lists: a bare array under every version (issue 14
// item 3), every page of the store fetched.
import { workspaceUserSchema, type WorkspaceUser } from '@tarmac/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
const DAY = 86_400_000;

describe.each(testDatabases(process.env))('users list on $name', (db) => {
  let t: Platform;
  afterEach(async () => {
    const opened = t;
    t = undefined as unknown as Platform;
    await opened?.dispose();
  });

  /** Admin + Ada (accepted), then old@ (invited 8 days ago: expired), b@ and c@ pending. */
  async function populate() {
    let now = Date.parse('2026-11-01T00:00:00Z');
    t = await openTestPlatform(db, { now: () => now });
    const invite = async (email: string) => {
      now += 1000;
      const res = await t.json<{ invitationToken?: string }>('/v0/users', {
        method: 'POST',
        body: { email },
      });
      expect(res.status).toBe(200);
      return res.body.invitationToken!;
    };
    const token = await invite('ada@example.com');
    expect(
      (await t.request('/v0/invitations/accept', { key: null, method: 'POST', body: { token } })).status,
    ).toBe(200);
    await invite('old@example.com');
    now += 8 * DAY;
    await invite('b@example.com');
    await invite('c@example.com');
  }

  /** The whole list in `sort` order; `limit` only sizes the store's pages behind it. */
  async function walk(sort: string, limit: number) {
    const res = await t.json<WorkspaceUser[]>(`/v0/users?sort=${sort}&limit=${limit}`, {
      version: '2026-04-28',
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    return res.body.map((u) => workspaceUserSchema.parse(u));
  }

  it('lists pending and expired invitations after the members, as accepted: false', async () => {
    await populate();
    const all = await t.json<WorkspaceUser[]>('/v0/users');
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(5);
    const byEmail = new Map(all.body.map((u) => [u.email, u]));
    expect(byEmail.get('ada@example.com')).toMatchObject({ accepted: true, expired: false });
    expect(byEmail.get('old@example.com')).toMatchObject({
      accepted: false,
      expired: true,
      source: 'invitation',
      role: 'member',
    });
    expect(byEmail.get('b@example.com')).toMatchObject({ accepted: false, expired: false, sub: '' });
    expect(all.body.slice(0, 2).every((u) => u.accepted)).toBe(true);

    // An expired invitation is removable like a pending one; then it is gone from the list.
    const removed = await t.json<WorkspaceUser>('/v0/users/old@example.com', { method: 'DELETE' });
    expect(removed.body).toMatchObject({ email: 'old@example.com', expired: true });
    expect((await t.json<WorkspaceUser[]>('/v0/users')).body.map((u) => u.email)).not.toContain(
      'old@example.com',
    );
  });

  it.each([
    ['createdAt:asc', 1],
    ['createdAt:asc', 2],
    ['createdAt:desc', 3],
    ['name:asc', 2],
    ['name:desc', 4],
  ])(
    'lists members then invitations with sort %s (limit %i ignored): none repeated or skipped',
    async (sort, limit) => {
      await populate();
      const users = await walk(sort, limit);
      const emails = users.map((u) => u.email);
      expect(new Set(emails).size).toBe(5);
      // Members first, then invitations in the requested order.
      expect(users.slice(0, 2).every((u) => u.accepted)).toBe(true);
      const invited = emails.slice(2);
      const expected = ['old@example.com', 'b@example.com', 'c@example.com'];
      if (sort === 'name:asc') expected.sort();
      if (sort === 'name:desc') expected.sort().reverse();
      if (sort === 'createdAt:desc') expected.reverse();
      expect(invited).toEqual(expected);
      const single = await walk(sort, 200);
      expect(single.map((u) => u.email)).toEqual(emails);
    },
  );

  it('search covers invitation emails', async () => {
    await populate();
    const res = await t.json<WorkspaceUser[]>('/v0/users?q=old@', { version: '2026-04-28' });
    expect(res.body.map((u) => u.email)).toEqual(['old@example.com']);
  });
});
