import { describe, expect, it } from 'vitest';
import { CURSOR_MAX_AGE_MS, CursorCodec } from './cursor.js';
import { ApiError } from './errors.js';

// Spec "Pagination": cursors are opaque, bound to their query, rejected when tampered or > 24 h old.
describe('CursorCodec', () => {
  const secret = new Uint8Array(32).fill(7);
  const binding = CursorCodec.binding({ scope: 'default', route: 'listX', filters: { q: null } });
  const codeOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof ApiError ? `${err.code} ${err.status}` : String(err);
    }
    return 'ok';
  };

  it('round-trips a position for the same query, until 24 hours have passed', () => {
    let now = 1_000_000;
    const codec = new CursorCodec(secret, () => now);
    const cursor = codec.encode({ key: '2026-01-01T00:00:00.000Z', id: 'abc' }, binding);
    expect(cursor).not.toContain('abc'); // opaque (base64url), not readable at a glance
    expect(codec.decode(cursor, binding)).toEqual({ key: '2026-01-01T00:00:00.000Z', id: 'abc' });
    now += CURSOR_MAX_AGE_MS;
    expect(codeOf(() => codec.decode(cursor, binding))).toBe('ok');
    now += 1;
    expect(codeOf(() => codec.decode(cursor, binding))).toBe('cursor_expired 400');
  });

  it('binds to workspace, route and filters; key order does not matter', () => {
    expect(CursorCodec.binding({ a: 1, b: 2 })).toBe(CursorCodec.binding({ b: 2, a: 1 }));
    const codec = new CursorCodec(secret);
    const cursor = codec.encode({ key: 'k', id: 'i' }, binding);
    for (const other of [
      { scope: 'other', route: 'listX', filters: { q: null } },
      { scope: 'default', route: 'listY', filters: { q: null } },
      { scope: 'default', route: 'listX', filters: { q: 'ab' } },
    ]) {
      expect(codeOf(() => codec.decode(cursor, CursorCodec.binding(other)))).toBe('cursor_mismatch 400');
    }
  });

  it('rejects tampered, truncated and foreign cursors as invalid_cursor', () => {
    const codec = new CursorCodec(secret);
    const cursor = codec.encode({ key: 'k', id: 'i' }, binding);
    const [body, signature] = cursor.split('.') as [string, string];
    const forgedBody = Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('"i":"i"', '"i":"j"'),
    ).toString('base64url');
    const foreign = new CursorCodec(new Uint8Array(32).fill(8)).encode({ key: 'k', id: 'i' }, binding);
    for (const bad of [
      `${forgedBody}.${signature}`,
      body,
      `${cursor}.x`,
      '',
      foreign,
      `${body}.${signature.slice(1)}`,
    ]) {
      expect(
        codeOf(() => codec.decode(bad, binding)),
        bad,
      ).toBe('invalid_cursor 400');
    }
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => new CursorCodec(new Uint8Array(16))).toThrow(/32 bytes/);
  });
});
