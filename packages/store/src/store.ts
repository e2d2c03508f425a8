import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import { repositories, type Repositories } from './repositories.js';
import { cachedStatements } from './statement-cache.js';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** `postgres://…` for PostgreSQL; anything else is a SQLite file path (or `:memory:`). */
  databaseUrl: string;
  /** PostgreSQL schema to use (created if missing); tests give each run its own. */
  schema?: string;
  /** Largest PostgreSQL pool. */
  maxConnections?: number;
  /** better-sqlite3's entry file for the checkpoint worker (a bundle's copy; wal-checkpointer.ts). */
  sqliteDriver?: string;
}

export interface Store extends Repositories {
  readonly dialect: Dialect;
  readonly db: Kysely<Database>;
  /** Runs `work` in one transaction: all of its writes land, or none. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
  /** A trivial query: the store answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the database and brings its schema up to date. SQLite runs in WAL mode with foreign keys
 * on; PostgreSQL through a pg pool. The same repositories serve both (issue "Platform core" §3).
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const isPostgres = /^postgres(ql)?:\/\//.test(options.databaseUrl);
  const { db, checkpointer } = isPostgres
    ? { db: openPostgres(options), checkpointer: undefined }
    : openSqlite(options.databaseUrl, options.sqliteDriver);
  if (isPostgres && options.schema) {
    if (!SCHEMA_NAME.test(options.schema)) throw new Error(`invalid schema name "${options.schema}"`);
    await sql`create schema if not exists ${sql.id(options.schema)}`.execute(db);
  }
  // With a schema, Kysely must be told so: otherwise it sees another schema's migration tables
  // (its table check ignores search_path), skips creating its own and fails on concurrent runs.
  const { error, results } = await new Migrator({
    db,
    provider: migrationProvider,
    // Migrations are numbered per area by parallel work (003 may land after 010): each is
    // independent, so a database that already ran a later number still takes an earlier new one.
    allowUnorderedMigrations: true,
    ...(isPostgres && options.schema ? { migrationTableSchema: options.schema } : {}),
  }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await checkpointer?.stop();
    await db.destroy();
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, {
      cause: error,
    });
  }
  const repos = repositories(db);
  return {
    ...repos,
    dialect: isPostgres ? 'postgres' : 'sqlite',
    db,
    transaction: (work) => db.transaction().execute((trx) => work(repositories(trx))),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

function openSqlite(
  path: string,
  driver: string | undefined,
): { db: Kysely<Database>; checkpointer: WalCheckpointer | undefined } {
  const database = new BetterSqlite3(path);
  const wal = database.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: cachedStatements(database) }) }),
    // A file database's checkpoints run in a worker (wal-checkpointer.ts); `:memory:` has no WAL.
    checkpointer: wal ? startWalCheckpointer(database, path, driver ? { driver } : {}) : undefined,
  };
}

function openPostgres(options: StoreOptions): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.maxConnections ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
