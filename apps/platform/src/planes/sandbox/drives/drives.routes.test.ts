import { testDatabases } from '@tarmac/store/test-support';
import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';

const drive = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { size: 10, permissions: [{ path: '/shared', mode: 'read-write' }], ...spec },
});

describe.each(testDatabases(process.env))('drives over HTTP ($name)', (database) => {
  let p: TestPlatform;
  beforeEach(async () => {
    p = await openTestPlatform(database);
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('creates a drive record whose status and events say plainly that nothing backs it yet', async () => {
    const { status, body } = await p.call('POST', '/v0/drives', drive('team'));
    expect(status).toBe(200);
    expect(body.status).toBe('FAILED'); // no storage backs drives yet; the event says so
    expect(body.events.at(-1).message).toMatch(/no storage backs drives/);
    expect(body.state).toEqual({ s3Url: '' });
    expect(body.spec.infrastructureId).toMatch(/^drv-/);
    expect((await p.call('POST', '/v0/drives', drive('team'))).status).toBe(409);
    expect((await p.call('GET', '/v0/drives?status=failed')).body.data).toHaveLength(1);
    expect((await p.call('GET', '/v0/drives?status=DEPLOYED')).status).toBe(400);
  });

  it('validates permissions (at most 3, mode read|read-write) and keeps spec immutable', async () => {
    const four = await p.call(
      'POST',
      '/v0/drives',
      drive('x', { permissions: [1, 2, 3, 4].map((i) => ({ path: `/p${i}` })) }),
    );
    expect(four.status).toBe(400);
    expect(four.body.message).toContain('spec.permissions');
    const mode = await p.call(
      'POST',
      '/v0/drives',
      drive('x', { permissions: [{ path: '/p', mode: 'write' }] }),
    );
    expect(mode.body.message).toContain('read or read-write');
    await p.call('POST', '/v0/drives', drive('team'));
    const size = await p.call('PUT', '/v0/drives/team', drive('team', { size: 20 }));
    expect(size.status).toBe(400);
    expect(size.body.message).toContain('spec.size');
    const ok = await p.call('PUT', '/v0/drives/team', {
      metadata: { name: 'team', displayName: 'Team' },
      spec: {},
    });
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.displayName).toBe('Team');
  });

  it('issues a short-lived access token scoped to the drive; delete returns the drive', async () => {
    await p.call('POST', '/v0/drives', drive('team'));
    const token = await p.call('POST', '/v0/drives/team/access-token');
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(decodeJwt(token.body.access_token)).toMatchObject({
      aud: 'tarmac-drive',
      drive: 'team',
      ws: 'default',
    });
    expect((await p.call('POST', '/v0/drives/none/access-token')).status).toBe(404);
    const deleted = await p.call('DELETE', '/v0/drives/team');
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('team');
    expect(deleted.body.terminatedAt).toEqual(expect.any(String));
    expect((await p.call('GET', '/v0/drives')).body.data).toEqual([]);
    expect((await p.call('POST', '/v0/drives', drive('team'))).status).toBe(200);
  });

  it('is scoped to the workspace', async () => {
    await p.call('POST', '/v0/drives', drive('team'));
    expect((await p.call('GET', '/v0/drives/team', undefined, { as: 'outsider' })).status).toBe(404);
    expect((await p.call('POST', '/v0/drives/team/access-token', undefined, { as: 'outsider' })).status).toBe(
      404,
    );
  });
});
