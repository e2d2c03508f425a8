import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Distinct SQL texts kept prepared; Kysely parameterises values, so a service has far fewer. */
export const STATEMENT_CACHE_SIZE = 512;
/**
 * Longer texts are prepared each time: multi-row inserts (a usage batch of up to 500 rows is a
 * ~30 KB text, one per batch size) would otherwise fill the cache with large statements that are
 * rarely reused, and their preparation is small beside their execution anyway.
 */
export const MAX_CACHED_SQL_LENGTH = 4096;

/**
 * The SQLite database as Kysely's SqliteDialect takes it, with each SQL text prepared once.
 * Kysely's driver calls `prepare` for every query, and sqlite3_prepare (parse and plan) was the
 * largest single cost of a pooled sandbox create (~0.7 ms of its ~7 ms of CPU on the 2-core CI
 * host, profiled; issue 20 item 1). A prepared statement stays valid across schema changes
 * (SQLite prepares it again itself). One still executing (an open iterator: `busy`) is not handed
 * out twice: that query gets a statement of its own. The least recently used text goes first.
 */
export function cachedStatements(db: BetterSqlite3.Database, max = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql) {
      if (sql.length > MAX_CACHED_SQL_LENGTH) return db.prepare(sql);
      const hit = cache.get(sql);
      if (hit && !hit.busy) {
        // Most recently used last: Map keeps insertion order.
        cache.delete(sql);
        cache.set(sql, hit);
        return hit;
      }
      const stmt = db.prepare(sql);
      if (!hit) {
        cache.set(sql, stmt);
        if (cache.size > max) cache.delete(cache.keys().next().value!);
      }
      return stmt;
    },
    close() {
      cache.clear();
      db.close();
    },
  };
}
