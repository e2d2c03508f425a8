import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from './harness.js';

describe.each(testDatabases(process.env))('test harness on $name', (db) => {
  let t: (TestPlatform & { dispose(): Promise<void> }) | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('serves the bootstrapped admin with the default workspace', async () => {
    t = await openTestPlatform(db);
    const { status, body } = await t.json<{ name: string }[]>('/v0/workspaces');
    expect(status).toBe(200);
    expect(body.map((w) => w.name)).toEqual(['default']);
    expect(t.adminKey).toMatch(/^ak_/);
  });

  it('sends no credentials when key is null', async () => {
    t = await openTestPlatform(db);
    expect((await t.request('/v0/workspaces', { key: null })).status).toBe(401);
  });
});
