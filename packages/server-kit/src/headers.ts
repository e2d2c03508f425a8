import type { Context } from 'hono';

/** First present value among a header and its aliases (names are case-insensitive in HTTP). */
export function readHeader(c: Context, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = c.req.header(name);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}
