// The property every create/update route must hold (issue 3): a random malformed body gets a 4xx
// whose message names the offending field, and the store is left exactly as it was. Bodies are
// made by corrupting one spot of a valid body (so they reach deep validation, not just the first
// type check) or by replacing the whole body with random JSON or broken text.
import fc from 'fast-check';
import type { z } from 'zod';
import { snapshotResources, type TestPlatform } from './platform-harness.js';

export interface BodyRoute {
  method: 'POST' | 'PUT';
  path: string;
  /** A body the route accepts. */
  valid: unknown;
  /** The contract schema of the body: a generated body it accepts is not malformed and is skipped. */
  schema: z.ZodType;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type PathStep = string | number;

/** Every path to a value inside `value` (the root included as []). */
function pathsOf(value: Json, prefix: PathStep[] = []): PathStep[][] {
  const out: PathStep[][] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  }
  return out;
}

const DELETE = Symbol('delete');
type Replacement = Json | typeof DELETE | { unknownKey: string };

function replaceAt(value: Json, path: PathStep[], replacement: Replacement): Json {
  const copy = structuredClone(value);
  if (path.length === 0) return replacement === DELETE || isUnknownKey(replacement) ? {} : replacement;
  let parent: Json = copy;
  for (const step of path.slice(0, -1)) parent = (parent as Record<PathStep, Json>)[step]!;
  const last = path[path.length - 1]!;
  const container = parent as Record<PathStep, Json>;
  if (replacement === DELETE) {
    if (Array.isArray(container)) container.splice(Number(last), 1);
    else delete container[last];
  } else if (isUnknownKey(replacement)) {
    const target = container[last];
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
      (target as Record<string, Json>)[replacement.unknownKey] = 'x';
    } else container[last] = { [replacement.unknownKey]: 'x' };
  } else container[last] = replacement;
  return copy;
}

function isUnknownKey(r: Replacement): r is { unknownKey: string } {
  return (
    typeof r === 'object' &&
    r !== null &&
    !Array.isArray(r) &&
    'unknownKey' in r &&
    Object.keys(r).length === 1
  );
}

const badValue: fc.Arbitrary<Replacement> = fc.oneof(
  fc.constant(null),
  fc.constant(DELETE),
  fc.boolean(),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true }),
  fc.constantFrom(-1, 0, 1.5, 2 ** 40),
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'NOT-AN-ENUM', 'UPPER_Case', '../etc', 'a'.repeat(300), '10 minutes', 'yesterday'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.constant({}),
  fc.record({ unknownKey: fc.constantFrom('gpu', 'bogus', 'zzz') }),
);

/** Random bodies derived from `valid`: one corrupted spot, or wholly random JSON / broken text. */
export function malformedBodies(valid: unknown): fc.Arbitrary<string> {
  const paths = pathsOf(valid as Json);
  const corrupted = fc
    .tuple(fc.constantFrom(...paths), badValue)
    .map(([path, replacement]) => JSON.stringify(replaceAt(valid as Json, path, replacement)));
  const random = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
  const broken = fc.constantFrom(
    '{',
    '{"metadata":',
    'null',
    '[]',
    '"text"',
    '{"metadata": {"name": "x"}, "spec": 5}',
  );
  return fc.oneof(
    { weight: 8, arbitrary: corrupted },
    { weight: 1, arbitrary: random },
    { weight: 1, arbitrary: broken },
  );
}

/** Runs the property against one route; throws (via fast-check) with the shrunk counterexample. */
export async function checkMalformedBodiesRejected(
  platform: TestPlatform,
  route: BodyRoute,
  options: { numRuns?: number; seed?: number } = {},
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(malformedBodies(route.valid), async (text) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = Symbol('not json');
      }
      fc.pre(typeof parsed === 'symbol' || !route.schema.safeParse(parsed).success);
      const before = await snapshotResources(platform.store);
      const response = await platform.request(route.method, route.path, text);
      const body = (await response.json()) as {
        error?: unknown;
        message?: unknown;
        details?: { field: string }[];
      };
      const where = `${route.method} ${route.path} with ${text.slice(0, 300)}`;
      if (response.status < 400 || response.status >= 500)
        throw new Error(`${where}: status ${response.status}`);
      if (typeof body.error !== 'string' || typeof body.message !== 'string')
        throw new Error(`${where}: no error body`);
      const fields = (body.details ?? []).map((d) => d.field);
      if (fields.length === 0 || !fields.some((f) => (body.message as string).includes(f))) {
        throw new Error(`${where}: message does not name a field: ${String(body.message)}`);
      }
      if ((await snapshotResources(platform.store)) !== before)
        throw new Error(`${where}: the store changed`);
    }),
    { numRuns: options.numRuns ?? 60, ...(options.seed !== undefined ? { seed: options.seed } : {}) },
  );
}
