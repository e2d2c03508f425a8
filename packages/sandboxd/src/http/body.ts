// JSON request bodies (reference sandbox-api.md §1.1): a parse failure is 400
// "invalid request body: …", and so is a body that does not match the route's schema.
import type { Context } from 'hono';
import type { $ZodType, output } from 'zod/v4/core';
import { safeParse } from 'zod/mini';
import { badRequest } from './errors.js';

export async function jsonBody<S extends $ZodType>(
  c: Context,
  schema: S,
  optional = false,
): Promise<output<S>> {
  const text = await c.req.text();
  let raw: unknown;
  if (text.trim() === '' && optional) raw = {};
  else {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw badRequest(`invalid request body: ${(err as Error).message}`);
    }
  }
  const parsed = safeParse(schema, raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw badRequest(`invalid request body: ${where}${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** `?name=true` style booleans. */
export const queryFlag = (v: string | undefined): boolean => v === 'true' || v === '1';

/** Integer query parameter with a default; 400 when present but not an integer. */
export function queryInt(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === '') return fallback;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid ${name}: ${v}`);
  return Number(v);
}

/** Comma-separated list; `undefined` when absent (so callers can apply defaults). */
export function queryList(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
