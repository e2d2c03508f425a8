import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors.js';

/** Where the previous page ended: its sort key and the unique id that breaks ties. */
export interface CursorPosition {
  key: string;
  id: string;
}

/** Spec "Pagination": cursors older than 24 hours are rejected. */
export const CURSOR_MAX_AGE_MS = 24 * 60 * 60 * 1000;

interface CursorPayload {
  v: 1;
  /** Hash of what the cursor is bound to: workspace, route, filters, sort. */
  b: string;
  k: string;
  i: string;
  /** Issued at, epoch milliseconds. */
  t: number;
}

/**
 * Opaque, tamper-proof cursors: `base64url(payload).base64url(HMAC-SHA256(payload))`. The payload
 * binds the cursor to one query, so a cursor replayed on another query, edited, or too old is a 400
 * with a distinct code (`cursor_mismatch`, `invalid_cursor`, `cursor_expired`).
 */
export class CursorCodec {
  constructor(
    private readonly secret: Uint8Array,
    private readonly now: () => number = Date.now,
  ) {
    if (secret.length < 32) throw new Error('cursor secret must be at least 32 bytes');
  }

  /** A stable digest of the query a cursor belongs to. */
  static binding(parts: Record<string, unknown>): string {
    const canonical = JSON.stringify(
      Object.keys(parts)
        .sort()
        .map((key) => [key, parts[key] ?? null]),
    );
    return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
  }

  encode(position: CursorPosition, binding: string): string {
    const payload: CursorPayload = { v: 1, b: binding, k: position.key, i: position.id, t: this.now() };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(cursor: string, binding: string): CursorPosition {
    const [body, signature, ...rest] = cursor.split('.');
    if (!body || !signature || rest.length > 0 || !this.verify(body, signature)) {
      throw new ApiError(
        'invalid_cursor',
        'query.cursor: not a cursor issued by this server (malformed or tampered)',
        {
          details: [{ field: 'query.cursor', message: 'malformed or tampered' }],
        },
      );
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    if (payload.b !== binding) {
      throw new ApiError(
        'cursor_mismatch',
        'query.cursor: belongs to another query (workspace, route, filters or sort differ); start again without a cursor',
        { details: [{ field: 'query.cursor', message: 'bound to a different query' }] },
      );
    }
    if (this.now() - payload.t > CURSOR_MAX_AGE_MS) {
      throw new ApiError(
        'cursor_expired',
        'query.cursor: older than 24 hours; start again without a cursor',
        {
          details: [{ field: 'query.cursor', message: 'expired' }],
        },
      );
    }
    return { key: payload.k, id: payload.i };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }

  private verify(body: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
