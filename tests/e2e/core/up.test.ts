import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, tempHome } from '../support/platform.js';

describe('tarmac platform binary: first start, second start, SIGTERM', () => {
  const home = tempHome();
  afterAll(() => removeHome(home));

  it('creates the account, workspace and admin key once, and reuses them on the next start', async () => {
    const first = await startPlatform({ home });
    expect(first.credentials.workspace).toBe('default');
    expect(first.credentials.apiKey).toMatch(/^ak_/);
    expect(statSync(join(home, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(first.output()).toContain(first.credentials.apiKey);
    const workspaces = await first.api('/v0/workspaces');
    expect(workspaces.status).toBe(200);
    expect(((await workspaces.json()) as { name: string }[]).map((w) => w.name)).toEqual(['default']);
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = await startPlatform({ home });
    expect(second.credentials.accountId).toBe(first.credentials.accountId);
    expect(second.credentials.apiKey).toBe(first.credentials.apiKey);
    expect(second.output()).not.toContain(first.credentials.apiKey);
    expect((await second.api('/v0/accounts')).status).toBe(200);
    expect(await second.stop('SIGTERM')).toBe(0);
  });
});
