// The databases every store test runs against: a fresh SQLite file, and a fresh schema on a real
// PostgreSQL server when TARMAC_TEST_DATABASE_URL names one (.ci/run always starts one, and a CI
// run without it fails rather than silently testing one dialect).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../store.js';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /** A new empty, migrated store; `dispose` removes it. */
  open(): Promise<{ store: Store; dispose: () => Promise<void> }>;
}

export function testDatabases(env: Record<string, string | undefined>): TestDatabase[] {
  const list: TestDatabase[] = [
    {
      name: 'sqlite',
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'tarmac-store-'));
        const store = await openStore({ databaseUrl: join(dir, 'tarmac.db') });
        return {
          store,
          dispose: async () => {
            await store.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
  const url = env.TARMAC_TEST_DATABASE_URL;
  if (!url && env.CI) throw new Error('CI must set TARMAC_TEST_DATABASE_URL (scripts/test-postgres.sh)');
  if (url) {
    list.push({
      name: 'postgres',
      async open() {
        const schema = `t_${randomBytes(6).toString('hex')}`;
        const store = await openStore({ databaseUrl: url, schema, maxConnections: 4 });
        return {
          store,
          dispose: async () => {
            await sql`drop schema ${sql.id(schema)} cascade`.execute(store.db);
            await store.close();
          },
        };
      },
    });
  }
  return list;
}
