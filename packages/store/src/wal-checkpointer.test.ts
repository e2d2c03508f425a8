import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

describe('startWalCheckpointer', () => {
  let dir: string;
  let path: string;
  let db: BetterSqlite3.Database;
  let checkpointer: WalCheckpointer | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-wal-'));
    path = join(dir, 'db.sqlite');
    db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('create table t (id integer primary key, body blob)');
  });
  afterEach(async () => {
    await checkpointer?.stop();
    checkpointer = undefined;
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** ~8 MB of rows, one commit each: eight times SQLite's default auto-checkpoint. */
  const write = () => {
    const insert = db.prepare('insert into t (body) values (?)');
    for (let i = 0; i < 512; i++) insert.run(Buffer.alloc(16_384, i));
  };
  const until = async (what: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!what()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('moves the checkpoints off the writing connection and into its worker', async () => {
    checkpointer = startWalCheckpointer(db, path, { intervalMs: 20 });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(16_384);
    const before = statSync(path).size;
    write();
    // The commits did not checkpoint (the database file is as it was: the pages are in the WAL)...
    expect(statSync(path).size).toBe(before);
    // ...the worker does, on its own connection, while this thread does nothing.
    await until(() => statSync(path).size > 8_000_000);
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 512 });
  });

  it('a worker that cannot load its driver leaves the connection checkpointing itself', async () => {
    checkpointer = startWalCheckpointer(db, join(dir, 'db.sqlite'), {
      driver: join(dir, 'no-such-driver.js'),
    });
    await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 1000);
    const before = statSync(path).size;
    write();
    expect(statSync(path).size).toBeGreaterThan(before);
  });

  it('without it, a commit checkpoints (what the worker takes off the event loop)', () => {
    const before = statSync(path).size;
    write();
    expect(statSync(path).size).toBeGreaterThan(before);
  });

  it('stops: the worker ends and the connection checkpoints in its commits again', async () => {
    const started = startWalCheckpointer(db, path, { intervalMs: 60_000 });
    expect(started).toBeDefined();
    await started?.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    const before = statSync(path).size;
    write();
    expect(statSync(path).size).toBeGreaterThan(before);
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 512 });
    db.close();
    // The last connection to close checkpoints and removes the WAL.
    expect(() => statSync(`${path}-wal`)).toThrow();
  });
});
