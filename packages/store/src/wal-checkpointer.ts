import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite's WAL checkpoints, off the event loop. By default the connection that commits a write
 * past 1,000 WAL pages copies the WAL back into the database file and fsyncs both, inside that
 * commit: 3–7 ms on this VM's disk, every few hundred writes, on whatever request or timer made
 * the write and on every request queued behind it on the event loop (measured with 5 KB rows:
 * 12 of 3,000 commits over 3 ms, none of the others over 0.2 ms). That was the tail of requests
 * that write nothing themselves (issue 18's streamed p99, issue 20's resume p99).
 *
 * So the platform's connection does not checkpoint in its commits; a worker thread with a
 * connection of its own runs PASSIVE checkpoints every `intervalMs` (they never wait for a reader
 * or a writer, and the writer goes on appending meanwhile: SQLite's WAL allows both). The main
 * connection keeps a far larger auto-checkpoint as a backstop, so the WAL stays bounded if the
 * worker falls behind, and goes back to SQLite's default if the worker dies.
 */
export interface WalCheckpointer {
  /** Stops the worker (the last connection to close checkpoints what is left). */
  stop(): Promise<void>;
}

export interface WalCheckpointerOptions {
  /** better-sqlite3's entry file for the worker to require; resolved from here when not given. */
  driver?: string;
  intervalMs?: number;
  /** The main connection's auto-checkpoint while the worker runs, in pages (the backstop). */
  backstopPages?: number;
}

/** SQLite's own default, restored when the worker is gone. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

// CommonJS, evaluated as the worker's script: no file of its own to resolve from source or dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy or gone: the next tick tries again; the backstop bounds the WAL meanwhile
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Starts the checkpoint worker for `database` (a file in WAL mode) at `path`; undefined, and the
 * connection checkpoints itself as SQLite does by default, when there is no driver file for a
 * worker to load (a bundle that inlines better-sqlite3 and names none).
 */
export function startWalCheckpointer(
  database: BetterSqlite3.Database,
  path: string,
  options: WalCheckpointerOptions = {},
): WalCheckpointer | undefined {
  const driver = options.driver ?? resolvable('better-sqlite3');
  if (driver === undefined) return undefined;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, intervalMs: options.intervalMs ?? 200 },
  });
  worker.unref();
  database.pragma(`wal_autocheckpoint = ${options.backstopPages ?? 16_384}`);
  // Stopped or dead (an 'error' ends the worker too): the connection checkpoints again itself.
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      if (database.open) database.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
      resolve();
    }),
  );
  return {
    stop: async () => {
      worker.postMessage('stop');
      await exited;
    },
  };
}

function resolvable(name: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(name);
  } catch {
    return undefined;
  }
}
