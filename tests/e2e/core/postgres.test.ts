// Issue "Platform core" §3: the built platform on PostgreSQL (TARMAC_DATABASE_URL) instead of the
// SQLite default. Each run creates a fresh database with the test server's superuser role and drops it.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, tempHome } from '../support/platform.js';
import { isolatedEnv } from './process.js';

const adminUrl = process.env.TARMAC_TEST_DATABASE_URL;
if (!adminUrl && process.env.CI) throw new Error('CI must set TARMAC_TEST_DATABASE_URL');

// Skips only on a machine without a PostgreSQL server (TARMAC_TEST_DATABASE_URL unset outside CI).
describe.skipIf(!adminUrl)('tarmac platform binary on PostgreSQL', () => {
  const database = `tarmac_e2e_${randomBytes(5).toString('hex')}`;
  const home = tempHome();
  let databaseUrl = '';
  const admin = () => new pg.Client({ connectionString: adminUrl });

  beforeAll(async () => {
    const client = admin();
    await client.connect();
    await client.query(`create database ${database}`);
    await client.end();
    const url = new URL(adminUrl!);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
  });

  afterAll(async () => {
    removeHome(home);
    const client = admin();
    await client.connect();
    await client.query(`drop database if exists ${database} with (force)`);
    await client.end();
  });

  it('creates its schema and identity in PostgreSQL, serves the API, and reuses them on restart', async () => {
    const first = await startPlatform({ home, env: await isolatedEnv({ TARMAC_DATABASE_URL: databaseUrl }) });
    expect(existsSync(join(home, 'tarmac.db'))).toBe(false);
    const created = await first.api('/v0/workspaces', {
      method: 'POST',
      body: JSON.stringify({ name: 'on-pg' }),
    });
    expect(created.status).toBe(200);
    const keyRes = await first.api('/v0/api_keys', {
      method: 'POST',
      body: JSON.stringify({ name: 'pg-key' }),
    });
    const key = (await keyRes.json()) as { id: string; apiKey: string };
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);
    expect(await first.stop('SIGTERM')).toBe(0);

    // The rows are in the new database, hashed.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const workspaces = await client.query<{ name: string }>('select name from workspaces order by name');
    const keys = await client.query<{ secret_hash: string }>('select * from api_keys where id = $1', [
      key.id,
    ]);
    await client.end();
    expect(workspaces.rows.map((r) => r.name)).toEqual(['default', 'on-pg']);
    expect(keys.rows).toHaveLength(1);
    expect(JSON.stringify(keys.rows[0])).not.toContain(key.apiKey.split('.')[1]);

    const second = await startPlatform({
      home,
      env: await isolatedEnv({ TARMAC_DATABASE_URL: databaseUrl }),
    });
    expect(second.credentials.accountId).toBe(first.credentials.accountId);
    expect((await second.api('/v0/workspaces/on-pg')).status).toBe(200);
    const withNewKey = await fetch(`${second.url}/v0/workspaces`, {
      headers: { authorization: `Bearer ${key.apiKey}` },
    });
    expect(withNewKey.status).toBe(200);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('refuses a TARMAC_DATABASE_URL that is not postgres:// with exit code 2', async () => {
    const scratch = tempHome();
    await expect(
      startPlatform({ home: scratch, env: { TARMAC_DATABASE_URL: 'mysql://x' }, timeoutMs: 10_000 }),
    ).rejects.toThrow(/exited early \(2\)[\s\S]*TARMAC_DATABASE_URL/);
    removeHome(scratch);
  });
});
