import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cachedStatements, MAX_CACHED_SQL_LENGTH } from './statement-cache.js';

describe('cachedStatements', () => {
  let db: BetterSqlite3.Database;
  afterEach(() => {
    if (db.open) db.close();
  });
  const open = () => {
    db = new BetterSqlite3(':memory:');
    db.exec('create table t (a integer)');
    db.exec('insert into t values (1), (2), (3)');
    return db;
  };

  it('prepares each SQL text once', () => {
    const prepare = vi.spyOn(open(), 'prepare');
    const cached = cachedStatements(db);
    const s1 = cached.prepare('select a from t where a > ?');
    const s2 = cached.prepare('select a from t where a > ?');
    expect(s2).toBe(s1);
    expect(prepare).toHaveBeenCalledTimes(1);
    expect(s2.all([1])).toEqual([{ a: 2 }, { a: 3 }]);
    expect(cached.prepare('select a from t where a < ?')).not.toBe(s1);
    expect(prepare).toHaveBeenCalledTimes(2);
  });

  it('gives a query its own statement while the cached one is still iterating', () => {
    const cached = cachedStatements(open());
    const sql = 'select a from t order by a';
    const it = cached.prepare(sql).iterate([]);
    expect(it.next().value).toEqual({ a: 1 });
    // The same text meanwhile: the busy statement would throw "busy executing a query".
    expect(cached.prepare(sql).all([])).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect([...it]).toEqual([{ a: 2 }, { a: 3 }]);
  });

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const prepare = vi.spyOn(open(), 'prepare');
    const cached = cachedStatements(db, 2);
    const a = cached.prepare('select 1');
    cached.prepare('select 2');
    expect(cached.prepare('select 1')).toBe(a); // now the most recent
    cached.prepare('select 3'); // evicts "select 2"
    expect(cached.prepare('select 1')).toBe(a);
    prepare.mockClear();
    cached.prepare('select 2');
    expect(prepare).toHaveBeenCalledTimes(1);
  });

  it('prepares long texts (multi-row inserts) each time instead of keeping them', () => {
    const prepare = vi.spyOn(open(), 'prepare');
    const cached = cachedStatements(db);
    const sql = `insert into t values ${Array.from({ length: MAX_CACHED_SQL_LENGTH / 4 }, () => '(?)').join(', ')}`;
    expect(cached.prepare(sql)).not.toBe(cached.prepare(sql));
    expect(prepare).toHaveBeenCalledTimes(2);
  });

  it('answers with the new schema after a change', () => {
    const cached = cachedStatements(open());
    expect(cached.prepare('select * from t where a = ?').all([1])).toEqual([{ a: 1 }]);
    db.exec("alter table t add column b text default 'x'");
    expect(cached.prepare('select * from t where a = ?').all([1])).toEqual([{ a: 1, b: 'x' }]);
  });

  it('closes the database', () => {
    const cached = cachedStatements(open());
    cached.prepare('select 1');
    cached.close();
    expect(db.open).toBe(false);
  });
});
