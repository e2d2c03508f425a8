/** A write hit a unique constraint (a duplicate name, id or membership), in either dialect. */
export class UniqueViolationError extends Error {
  constructor(cause: unknown) {
    super('unique constraint violated', { cause });
    this.name = 'UniqueViolationError';
  }
}

/** An update lost a race: the row changed since it was read (optimistic concurrency). */
export class StaleRevisionError extends Error {
  constructor(what: string) {
    super(`${what} was changed concurrently; read it again`);
    this.name = 'StaleRevisionError';
  }
}

/** SQLite reports SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY; PostgreSQL reports SQLSTATE 23505. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** Runs a write and turns a unique-constraint failure into `UniqueViolationError`. */
export async function uniquely<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new UniqueViolationError(err);
    throw err;
  }
}
